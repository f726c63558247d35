package redisstore

import "github.com/redis/go-redis/v9"

// The scripts of a [ConversationStore]. Each checks before it writes, so
// that a refusal, or an error reply, leaves nothing written. A
// conversation's keys, in the order of KEYS: the record hash :c (o the
// owner's id, n its tenant, k the turn count, r the running turn, x the
// id of the create that stored it), the positions hash :i (turn id →
// position), the lists :d of turn ids and :u of user texts (start
// order) and the states hash :s (turn id → reduced state).

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

// startScript appends turn ARGV[1] with user text ARGV[2] and records it
// as running; KEYS are :c, :i, :d, :u. It returns the turn's position, -1
// for an unknown conversation or -2 when another turn runs; a resent
// start (the running turn is ARGV[1]) returns its position again.
var startScript = redis.NewScript(`
local rec = redis.call('HMGET', KEYS[1], 'o', 'r')
if not rec[1] then return -1 end
if rec[2] then
	if rec[2] == ARGV[1] then return tonumber(redis.call('HGET', KEYS[2], ARGV[1])) end
	return -2
end
local pos = redis.call('HINCRBY', KEYS[1], 'k', 1)
redis.call('HSET', KEYS[1], 'r', ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], pos)
redis.call('RPUSH', KEYS[3], ARGV[1])
redis.call('RPUSH', KEYS[4], ARGV[2])
return pos
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

// runningScript returns the running turn {id, position, text}, {false}
// when there is none, {} for an unknown conversation; KEYS are :c, :i,
// :u.
var runningScript = redis.NewScript(`
local rec = redis.call('HMGET', KEYS[1], 'o', 'r')
if not rec[1] then return {} end
if not rec[2] then return {false} end
local pos = tonumber(redis.call('HGET', KEYS[2], rec[2]))
return {rec[2], pos, redis.call('LINDEX', KEYS[3], pos - 1)}
`)

// turnScript returns {owner, tenant, turns, running, position, text,
// state} of turn ARGV[1], false for what is missing, {} for an unknown
// conversation; KEYS are :c, :i, :u, :s.
var turnScript = redis.NewScript(`
local rec = redis.call('HMGET', KEYS[1], 'o', 'n', 'k', 'r')
if not rec[1] then return {} end
local pos = redis.call('HGET', KEYS[2], ARGV[1])
if not pos then return {rec[1], rec[2], rec[3], rec[4], false, false, false} end
pos = tonumber(pos)
return {rec[1], rec[2], rec[3], rec[4], pos, redis.call('LINDEX', KEYS[3], pos - 1), redis.call('HGET', KEYS[4], ARGV[1])}
`)

// historyScript returns {owner, tenant, turns, running, ids, texts,
// states}, the states as HGETALL's flat pairs, {} for an unknown
// conversation; KEYS are :c, :d, :u, :s.
var historyScript = redis.NewScript(`
local rec = redis.call('HMGET', KEYS[1], 'o', 'n', 'k', 'r')
if not rec[1] then return {} end
return {rec[1], rec[2], rec[3], rec[4], redis.call('LRANGE', KEYS[2], 0, -1), redis.call('LRANGE', KEYS[3], 0, -1), redis.call('HGETALL', KEYS[4])}
`)
