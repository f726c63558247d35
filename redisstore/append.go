package redisstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// appendSource is the script that stores one frame as its turn's next,
// atomically; newAppendScript fills in a Window's retention (%[1]d frames
// kept, 0: no bound; %[2]d bytes kept, -1: no bound) and expiries in ms
// (%[3]d the stream's while the turn is live, 0: none; %[4]d once it has
// ended; %[5]d the bounds', 0: none), so that an append sends only what
// changes.
//
//	KEYS[1] the stream, KEYS[2] the bounds: "<latest> <lower> <ended> <bytes>"
//	ARGV[1] seq, ARGV[2] type, ARGV[3] data, ARGV[4] "1": it ends the turn,
//	ARGV[5] "1": it is a tool_result, ARGV[6] the channel
//
// It refuses, storing nothing, unless the bounds' latest is seq-1 and the
// turn has not ended (a late tool_result excepted), and returns the bounds
// {lower, latest, ended (0 or 1)}; a stream that expired leaves its
// bounds, Lower = Latest. Otherwise it adds the entry (XADD refuses an id
// not above the stream's last; NOMKSTREAM finds a stream that expired
// without a call of its own), drops the oldest entries that the count and
// byte retention exclude (never the new one), sets the bounds with their
// expiry and the stream's, publishes the bounds (as stored) and returns 1.
const appendSource = `
local m = redis.call('GET', KEYS[2])
local latest, lower, ended, bytes, lowerText = 0, 0, '0', 0, '0'
if m then
	local a, b, e, d = string.match(m, '^(%%d+) (%%d+) ([01]) (%%d+)$')
	latest, lower, ended, bytes, lowerText = tonumber(a), tonumber(b), e, tonumber(d), b
end
if tonumber(ARGV[1]) ~= latest + 1 or (ended == '1' and ARGV[5] ~= '1') then
	if latest > lower and redis.call('EXISTS', KEYS[1]) == 0 then
		lower = latest
	end
	return {lower, latest, tonumber(ended)}
end
local id = ARGV[1] .. '-0'
if latest == lower or not redis.call('XADD', KEYS[1], 'NOMKSTREAM', id, 't', ARGV[2], 'd', ARGV[3]) then
	if latest > lower then
		lower, lowerText = latest, tostring(latest)
		bytes = 0
	end
	redis.call('XADD', KEYS[1], id, 't', ARGV[2], 'd', ARGV[3])
end
latest = latest + 1
bytes = bytes + #ARGV[3]
if ARGV[4] == '1' then
	ended = '1'
end
local keep, maxBytes = %[1]d, %[2]d
if (keep > 0 and latest - keep > lower) or (maxBytes >= 0 and bytes > maxBytes) then
	local target = lower
	if keep > 0 and latest - keep > target then
		target = latest - keep
	end
	local cut = lower
	while cut < latest - 1 and (cut < target or (maxBytes >= 0 and bytes > maxBytes)) do
		local n = 8
		if target - cut > n then
			n = math.min(target - cut, 256)
		end
		local batch = redis.call('XRANGE', KEYS[1], (cut + 1) .. '-0', '+', 'COUNT', n)
		local moved = false
		for _, e in ipairs(batch) do
			local s = tonumber(string.match(e[1], '^%%d+'))
			if s >= latest or not (s <= target or (maxBytes >= 0 and bytes > maxBytes)) then
				break
			end
			bytes = bytes - #e[2][4]
			cut = s
			moved = true
		end
		if not moved then
			break
		end
	end
	if cut > lower then
		redis.call('XTRIM', KEYS[1], 'MINID', (cut + 1) .. '-0')
		lower, lowerText = cut, tostring(cut)
	end
end
local bounds = ARGV[1] .. ' ' .. lowerText .. ' ' .. ended .. ' ' .. bytes
if %[5]d > 0 then
	redis.call('SET', KEYS[2], bounds, 'PX', '%[5]d')
else
	redis.call('SET', KEYS[2], bounds)
end
if ended == '1' then
	redis.call('PEXPIRE', KEYS[1], '%[4]d')
elseif %[3]d > 0 then
	redis.call('PEXPIRE', KEYS[1], '%[3]d')
else
	redis.call('PERSIST', KEYS[1])
end
redis.call('PUBLISH', ARGV[6], bounds)
return 1
`

// newAppendScript returns w's append script: appendSource with w's
// retention and expiries.
func newAppendScript(w *Window) *redis.Script {
	return redis.NewScript(fmt.Sprintf(appendSource, w.maxFrames, w.maxBytes,
		w.liveTTL(), max(w.endedTTL.Milliseconds(), 1), w.boundsTTL()))
}

// Append stores env as the next frame of key's turn and returns it (see
// [replay.Window.Append]), in one script that checks and moves the turn's
// latest seq, adds the frame's canonical bytes as the stream entry
// "<seq>-0", applies the count and byte retention and the expiries, and
// publishes the bounds to every instance waiting on the turn
// (docs/contract.md section 11.9); the appends of a Window that wait at
// the same moment share one pipeline. Refusals are [*replay.AppendError] with
// the turn's bounds and nothing stored, with the codes [replay.CheckAppend]
// and [replay.EncodeFrame] give; the seq and end rules are checked by the
// script against the bounds it holds, so that two writers, or a writer
// whose acknowledgement was lost and who appends again, can neither leave
// a gap nor store a seq twice. Any other error is Redis's, the outcome
// unknown when the connection broke after the script was sent: the frame
// may have been stored, and the writer learns it from [Window.Bounds] or
// from the sequence-reordered refusal of its retry (as a turn producer
// does). While the script waits for a pipeline, the end of ctx takes it
// off the queue and Append returns ctx's error, nothing sent. An Append
// that finds a lane free sends its pipeline itself, without a goroutine
// hop, and waits for Redis's answer, bounded by the client's read timeout
// (go-redis: ReadTimeout, 3 s by default), before it sees ctx's end; any
// other Append returns ctx's error as soon as ctx ends, the outcome
// unknown.
func (w *Window) Append(ctx context.Context, key replay.Key, env *chatprotocol.ChatEventEnvelope) (replay.Frame, error) {
	if err := ctx.Err(); err != nil {
		return replay.Frame{}, err
	}
	f, err := replay.EncodeFrame(env, w.maxFrameBytes)
	if err != nil {
		b, berr := w.Bounds(ctx, key)
		if berr != nil {
			return replay.Frame{}, fmt.Errorf("redisstore: reading the bounds of a refused append: %w", berr)
		}
		var seq int64
		if env != nil {
			seq = env.Seq
		}
		return replay.Frame{}, &replay.AppendError{Seq: seq, Bounds: b, Err: err}
	}
	if env.ConversationID != key.ConversationID || env.TurnID != key.TurnID || env.Seq <= 0 {
		b, berr := w.Bounds(ctx, key)
		if berr != nil {
			return replay.Frame{}, fmt.Errorf("redisstore: reading the bounds of a refused append: %w", berr)
		}
		return replay.Frame{}, replay.CheckAppend(key, b, env)
	}
	_, toolResult := env.Event.(*chatprotocol.ToolResultEvent)
	k := keysOf(w.prefix, key)
	r := &appendRequest{keys: []string{k.frames, k.meta}, args: []any{
		f.Seq, f.Type, f.Data, flag(replay.EndsTurn(env)), flag(toolResult), k.channel}}
	if err := w.batch.submit(ctx, r); err != nil {
		w.appended(key, 0)
		return replay.Frame{}, err
	}
	if r.err != nil {
		w.appended(key, 0)
		return replay.Frame{}, fmt.Errorf("redisstore: append of seq %d: %w", f.Seq, r.err)
	}
	switch res := r.res.(type) {
	case int64:
		if res == 1 {
			w.appended(key, f.Seq)
			return f, nil
		}
	case []any:
		var n [3]int64
		for i := range n {
			if i < len(res) {
				n[i], _ = res[i].(int64)
			}
		}
		if len(res) == len(n) {
			b := replay.Bounds{Lower: n[0], Latest: n[1], Ended: n[2] == 1}
			if err := replay.CheckAppend(key, b, env); err != nil {
				return replay.Frame{}, err
			}
			// The script and CheckAppend apply the same rules to the same bounds.
			return replay.Frame{}, errors.New("redisstore: append refused by the script against bounds that allow it")
		}
	}
	return replay.Frame{}, fmt.Errorf("redisstore: append of seq %d: the script answered %v", f.Seq, r.res)
}

// flag is a script's boolean argument.
func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// liveTTL is a live turn's stream expiry after an append, in
// milliseconds (0: none): MaxAge.
func (w *Window) liveTTL() int64 {
	if w.maxAge < 0 {
		return 0
	}
	return max(w.maxAge.Milliseconds(), 1)
}

// boundsTTL is the bounds' expiry after an append, in milliseconds
// (0: none): TombstoneTTL, at least as long as the frames.
func (w *Window) boundsTTL() int64 {
	if w.tombstoneTTL < 0 || w.maxAge < 0 {
		return 0
	}
	return max(w.tombstoneTTL, w.maxAge, w.endedTTL).Milliseconds()
}
