package redisstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/Papercusp/chat-protocol-go/internal/patience"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// readScript returns a turn's bounds and the page after a cursor, in one
// script: one snapshot, so that the frames are exactly those the bounds
// promise.
//
//	KEYS[1] the stream, KEYS[2] the bounds (see appendSource)
//	ARGV[1] the cursor (-1: the bounds alone), ARGV[2] the page's bytes
//
// It returns {lower, latest, ended (0 or 1), type, data, type, data, …}:
// the frames after+1, after+2, … whose data fit in the page's bytes, at
// least one when the cursor is within [lower, latest); none when it is
// outside (the caller refuses it). An unknown turn is {0, 0, 0}; a stream
// that expired leaves its bounds, Lower = Latest. The entries are read in
// batches sized by the turn's mean frame, so that a page of a few large
// frames does not copy many.
var readScript = redis.NewScript(`
local latest, lower, ended, bytes = 0, 0, 0, 0
local m = redis.call('GET', KEYS[2])
if m then
	local a, b, e, d = string.match(m, '^(%d+) (%d+) ([01]) (%d+)$')
	latest, lower, ended, bytes = tonumber(a), tonumber(b), tonumber(e), tonumber(d)
end
if latest > lower and redis.call('EXISTS', KEYS[1]) == 0 then
	lower = latest
end
local out = {lower, latest, ended}
local after = tonumber(ARGV[1])
if after < lower or after >= latest then
	return out
end
local limit = tonumber(ARGV[2])
local mean = math.max(math.floor(bytes / math.max(latest - lower, 1)), 1)
local size, cur = 0, after
while cur < latest do
	local n = math.min(math.max(math.floor((limit - size) / mean) + 1, 1), 256)
	local batch = redis.call('XRANGE', KEYS[1], (cur + 1) .. '-0', '+', 'COUNT', n)
	if #batch == 0 then
		break
	end
	for _, e in ipairs(batch) do
		local s = tonumber(string.match(e[1], '^%d+'))
		local d = e[2][4]
		if s ~= cur + 1 or (#out > 3 and size + #d > limit) then
			return out
		end
		size = size + #d
		out[#out + 1] = e[2][2]
		out[#out + 1] = d
		cur = s
	end
end
return out
`)

// query runs readScript: key's bounds and, when after >= 0, the page after
// it of at most limit bytes.
func (w *Window) query(ctx context.Context, key replay.Key, after int64, limit int) (replay.Bounds, []replay.Frame, error) {
	k := keysOf(w.prefix, key)
	v, err := readScript.Run(ctx, w.client, []string{k.frames, k.meta}, after, max(limit, 1)).Slice()
	if err != nil {
		return replay.Bounds{}, nil, err
	}
	if len(v) < 3 || len(v)%2 == 0 {
		return replay.Bounds{}, nil, fmt.Errorf("redisstore: the read script answered %d values", len(v))
	}
	var n [3]int64
	for i := range n {
		x, ok := v[i].(int64)
		if !ok {
			return replay.Bounds{}, nil, fmt.Errorf("redisstore: the read script answered %T", v[i])
		}
		n[i] = x
	}
	b := replay.Bounds{Lower: n[0], Latest: n[1], Ended: n[2] == 1}
	if len(v) == 3 {
		return b, nil, nil
	}
	frames := make([]replay.Frame, 0, (len(v)-3)/2)
	for i := 3; i < len(v); i += 2 {
		typ, ok1 := v[i].(string)
		data, ok2 := v[i+1].(string)
		if !ok1 || !ok2 {
			return replay.Bounds{}, nil, fmt.Errorf("redisstore: the read script answered %T and %T", v[i], v[i+1])
		}
		frames = append(frames, replay.Frame{Seq: after + 1 + int64(len(frames)), Type: typ, Data: []byte(data)})
	}
	return b, frames, nil
}

// Read returns key's bounds and one page of the retained suffix after
// after: the frames after+1, after+2, … that fit in limit bytes of data,
// at least one below Latest (see [replay.Window.Read]), from one script:
// the readers of one page of a turn in this process share one call, a
// reader joins a call in flight that started after frame after+1 was known
// to be stored, and the Window serves later readers from the newest frames
// its reads returned while nothing newer is known of the turn. Every frame
// whose Append returned through this Window before the call, or that the
// Window heard of, is within reach; one appended through another instance
// that this one has not heard of yet may be missing, as if the Read had
// run just before its Append (docs/contract.md section 11.9). Refusals are
// [*replay.CursorError] with the bounds (stale-cursor, cursor-ahead). While
// Redis cannot be reached or is loading, Read retries for
// [WindowOptions.Patience], then returns the error; it returns ctx's error
// as soon as ctx is done, even while Redis stalls.
func (w *Window) Read(ctx context.Context, key replay.Key, after int64, limit int) (replay.Bounds, []replay.Frame, error) {
	if err := ctx.Err(); err != nil {
		return replay.Bounds{}, nil, err
	}
	p, err := w.fetch(ctx, fetchKey{key: key, after: max(after, 0), limit: max(limit, 1)})
	if err != nil {
		return p.b, nil, err
	}
	if err := replay.CheckCursor(p.b, after); err != nil {
		return p.b, nil, err
	}
	return p.b, slices.Clone(p.frames), nil
}

// page is a read's result.
type page struct {
	b      replay.Bounds
	frames []replay.Frame
}

// Bounds returns key's bounds (see [replay.Window.Bounds]): Lower =
// Latest for a turn whose frames expired, (0, 0) for one never appended
// to or whose bounds expired ([WindowOptions.TombstoneTTL]). It retries
// and returns like [Window.Read].
func (w *Window) Bounds(ctx context.Context, key replay.Key) (replay.Bounds, error) {
	if err := ctx.Err(); err != nil {
		return replay.Bounds{}, err
	}
	p, err := w.fetch(ctx, fetchKey{key: key, after: -1, limit: 1})
	return p.b, err
}

// unreachable reports whether err says Redis could not be reached, or is
// not serving yet (LOADING, MASTERDOWN, TRYAGAIN, CLUSTERDOWN): worth
// retrying while WindowOptions.Patience lasts. A reply of the server is
// not, nor the end of a context.
func unreachable(err error) bool {
	if err == nil || errors.Is(err, errClosed) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if errors.Is(err, redis.ErrClosed) {
		return false
	}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		msg := rerr.Error()
		for _, p := range []string{"LOADING", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN", "BUSY "} {
			if strings.HasPrefix(msg, p) {
				return true
			}
		}
		return false
	}
	return true
}

// patient retries op while it fails with an unreachable Redis, for up to
// w.patience, with a growing pause; it returns op's last error, or ctx's.
func (w *Window) patient(ctx context.Context, op func() error) error {
	err := patience.Retry(ctx, w.ctx, errClosed, w.patience, unreachable, op)
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}
