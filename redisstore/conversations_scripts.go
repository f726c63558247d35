package redisstore

import "github.com/redis/go-redis/v9"

// The scripts of a [ConversationStore]. Each checks before it writes, so
// that a refusal, or an error reply, leaves nothing written. A
// conversation's keys, in the order of KEYS: the record hash :c (o the
// owner's id, n its tenant, k the turn count, r the running turn, x the
// id of the create that stored it), the positions hash :i (turn id →
// position), the lists :d of turn ids and :u of user texts (start
// order), the states hash :s (turn id → reduced state), and the request
// keys of the starts that carried one: the hash :k (turn id → key) and
// the hash :q (key → turn id).

// createScript stores the record of KEYS[1] (:c) for owner ARGV[1],
// tenant ARGV[2], under the create's id ARGV[3]; it returns 1, or 0 when
// the id is taken by another create. A resent create (the same ARGV[3])
// returns 1 again.
var createScript = redis.NewScript(`
local x = redis.call('HGET', KEYS[1], 'x')
if x then
	if x == ARGV[3] then return 1 end
	return 0
end
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'o', ARGV[1], 'n', ARGV[2], 'k', 0, 'x', ARGV[3])
return 1
`)

// startScript starts turn ARGV[1] with user text ARGV[2] and request
// key ARGV[3] ("" for none); KEYS are :c, :i, :d, :u, :s, :k, :q. A key
// :q holds is its turn again: {position, id, text, state or false}, and
// nothing is written. Otherwise it appends the turn, records it as running
// and records its key, and returns {position}; {-1} for an unknown
// conversation, {-2} when another turn runs. A resent start (its key's
// turn, or the running turn, is ARGV[1]) returns {position} again.
var startScript = redis.NewScript(`
local rec = redis.call('HMGET', KEYS[1], 'o', 'r')
if not rec[1] then return {-1} end
if ARGV[3] ~= '' then
	local seen = redis.call('HGET', KEYS[7], ARGV[3])
	if seen then
		local pos = tonumber(redis.call('HGET', KEYS[2], seen))
		if seen == ARGV[1] then return {pos} end
		return {pos, seen, redis.call('LINDEX', KEYS[4], pos - 1), redis.call('HGET', KEYS[5], seen)}
	end
end
if rec[2] then
	if rec[2] == ARGV[1] then return {tonumber(redis.call('HGET', KEYS[2], ARGV[1]))} end
	return {-2}
end
local pos = redis.call('HINCRBY', KEYS[1], 'k', 1)
redis.call('HSET', KEYS[1], 'r', ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], pos)
redis.call('RPUSH', KEYS[3], ARGV[1])
redis.call('RPUSH', KEYS[4], ARGV[2])
if ARGV[3] ~= '' then
	redis.call('HSET', KEYS[6], ARGV[1], ARGV[3])
	redis.call('HSET', KEYS[7], ARGV[3], ARGV[1])
end
return {pos}
`)

// endScript stores state ARGV[2] of turn ARGV[1] and clears the running
// turn when it is this one; KEYS are :c, :i, :s. It returns 1 (stored, or
// stored before with the same bytes), 0 for an unknown turn or one ended
// with other bytes, -1 for an unknown conversation.
var endScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then return 0 end
local old = redis.call('HGET', KEYS[3], ARGV[1])
if old then
	if old == ARGV[2] then return 1 end
	return 0
end
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
if redis.call('HGET', KEYS[1], 'r') == ARGV[1] then redis.call('HDEL', KEYS[1], 'r') end
return 1
`)

// runningScript returns the running turn {id, position, text, key},
// {false} when there is none, {} for an unknown conversation; KEYS are
// :c, :i, :u, :k.
var runningScript = redis.NewScript(`
local rec = redis.call('HMGET', KEYS[1], 'o', 'r')
if not rec[1] then return {} end
if not rec[2] then return {false} end
local pos = tonumber(redis.call('HGET', KEYS[2], rec[2]))
return {rec[2], pos, redis.call('LINDEX', KEYS[3], pos - 1), redis.call('HGET', KEYS[4], rec[2])}
`)

// turnScript returns {owner, tenant, turns, running, position, text,
// state, key} of turn ARGV[1], false for what is missing, {} for an
// unknown conversation; KEYS are :c, :i, :u, :s, :k.
var turnScript = redis.NewScript(`
local rec = redis.call('HMGET', KEYS[1], 'o', 'n', 'k', 'r')
if not rec[1] then return {} end
local pos = redis.call('HGET', KEYS[2], ARGV[1])
if not pos then return {rec[1], rec[2], rec[3], rec[4], false, false, false, false} end
pos = tonumber(pos)
return {rec[1], rec[2], rec[3], rec[4], pos, redis.call('LINDEX', KEYS[3], pos - 1), redis.call('HGET', KEYS[4], ARGV[1]),
	redis.call('HGET', KEYS[5], ARGV[1])}
`)

// historyScript returns {owner, tenant, turns, running, ids, texts,
// states, keys}, the states and the request keys as HGETALL's flat pairs,
// {} for an unknown conversation; KEYS are :c, :d, :u, :s, :k.
var historyScript = redis.NewScript(`
local rec = redis.call('HMGET', KEYS[1], 'o', 'n', 'k', 'r')
if not rec[1] then return {} end
return {rec[1], rec[2], rec[3], rec[4], redis.call('LRANGE', KEYS[2], 0, -1), redis.call('LRANGE', KEYS[3], 0, -1),
	redis.call('HGETALL', KEYS[4]), redis.call('HGETALL', KEYS[5])}
`)
