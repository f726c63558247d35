package redisstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// appendScript stores one frame as its turn's next, atomically.
//
//	KEYS[1] the stream, KEYS[2] the bounds hash
//	ARGV[1] seq, ARGV[2] type, ARGV[3] data, ARGV[4] "1": it ends the turn,
//	ARGV[5] "1": it is a tool_result, ARGV[6] frames kept (0: no bound),
//	ARGV[7] bytes kept (-1: no bound), ARGV[8] the stream's expiry in ms
//	while the turn is live (0: none), ARGV[9] the hash's expiry in ms (0:
//	none), ARGV[10] the channel, ARGV[11] the stream's expiry in ms once
//	the turn has ended
//
// It refuses, storing nothing, unless the hash's latest is seq-1 and the
// turn has not ended (a late tool_result excepted); a stream that expired
// leaves its bounds, Lower = Latest. Otherwise it adds the entry (XADD
// refuses an id not above the stream's last), drops the oldest entries
// that the count and byte retention exclude (never the new one), updates
// the hash, sets both expiries and publishes seq. It returns {stored (0 or
// 1), lower, latest, ended (0 or 1)}.
var appendScript = redis.NewScript(`
local seq = tonumber(ARGV[1])
local m = redis.call('HMGET', KEYS[2], 'latest', 'lower', 'ended', 'bytes')
local latest = tonumber(m[1]) or 0
local lower = tonumber(m[2]) or 0
local ended = m[3] == '1'
local bytes = tonumber(m[4]) or 0
if latest > lower and redis.call('EXISTS', KEYS[1]) == 0 then
	lower = latest
	bytes = 0
end
if seq ~= latest + 1 or (ended and ARGV[5] ~= '1') then
	return {0, lower, latest, ended and 1 or 0}
end
redis.call('XADD', KEYS[1], seq .. '-0', 't', ARGV[2], 'd', ARGV[3])
latest = seq
bytes = bytes + #ARGV[3]
ended = ended or ARGV[4] == '1'
local keep = tonumber(ARGV[6])
local maxBytes = tonumber(ARGV[7])
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
		local s = tonumber(string.match(e[1], '^%d+'))
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
	lower = cut
end
redis.call('HSET', KEYS[2], 'latest', latest, 'lower', lower, 'ended', ended and '1' or '0', 'bytes', bytes)
local ttl, keepBounds = tonumber(ARGV[8]), tonumber(ARGV[9])
if ended then
	ttl = tonumber(ARGV[11])
end
if ttl > 0 then
	redis.call('PEXPIRE', KEYS[1], ttl)
else
	redis.call('PERSIST', KEYS[1])
end
if keepBounds > 0 then
	redis.call('PEXPIRE', KEYS[2], keepBounds)
else
	redis.call('PERSIST', KEYS[2])
end
redis.call('PUBLISH', ARGV[10], latest)
return {1, lower, latest, ended and 1 or 0}
`)

// Append stores env as the next frame of key's turn and returns it (see
// [replay.Window.Append]), in one script that checks and moves the turn's
// latest seq, adds the frame's canonical bytes as the stream entry
// "<seq>-0", applies the count and byte retention and the expiries, and
// publishes the seq to every instance waiting on the turn
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
		f.Seq, f.Type, f.Data, flag(replay.EndsTurn(env)), flag(toolResult),
		w.maxFrames, w.maxBytes, w.liveTTL(), w.boundsTTL(), k.channel, max(w.endedTTL.Milliseconds(), 1)}}
	if err := w.batch.submit(ctx, r); err != nil {
		return replay.Frame{}, err
	}
	res, err := r.res, r.err
	if err != nil {
		return replay.Frame{}, fmt.Errorf("redisstore: append of seq %d: %w", f.Seq, err)
	}
	if len(res) != 4 {
		return replay.Frame{}, fmt.Errorf("redisstore: append of seq %d: the script answered %d values", f.Seq, len(res))
	}
	if res[0] == 1 {
		return f, nil
	}
	b := replay.Bounds{Lower: res[1], Latest: res[2], Ended: res[3] == 1}
	if err := replay.CheckAppend(key, b, env); err != nil {
		return replay.Frame{}, err
	}
	// The script and CheckAppend apply the same rules to the same bounds.
	return replay.Frame{}, errors.New("redisstore: append refused by the script against bounds that allow it")
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

// boundsTTL is the bounds hash's expiry after an append, in milliseconds
// (0: none): TombstoneTTL, at least as long as the frames.
func (w *Window) boundsTTL() int64 {
	if w.tombstoneTTL < 0 || w.maxAge < 0 {
		return 0
	}
	return max(w.tombstoneTTL, w.maxAge, w.endedTTL).Milliseconds()
}
