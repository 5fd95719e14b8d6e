/**
 * The Lua code RateLimiterRedis sends: rate-limiter-flexible's Redis data,
 * written and read by scripts of our own.
 *
 * The rule: every operation leaves exactly what rate-limiter-flexible 11.4
 * leaves at `prefix:key` (an integer string, with a TTL in whole seconds or
 * none) and answers what rlf's commands answer (the count and PTTL, from the
 * server's clock), so a fleet of rlf and ratekit processes on one Redis
 * counts as one fleet. A script runs without interruption, so an operation
 * is as atomic as rlf's MULTI or script; a batch runs its operations in the
 * order given, each exactly as it would run alone.
 *
 * Operations (`op`, then `points`, then `seconds`, as strings):
 * - `i` consume/penalty/reward with a TTL (`seconds` > 0): `SET key 0 EX seconds NX`,
 *   `INCRBY key points`, `PTTL key`; a key without a TTL (a `block(key, 0)`,
 *   or a `set(key, n, 0)` before) gets `EXPIRE key seconds` and reports
 *   `seconds × 1000`, as rlf's script does. Reply `{count, pttl}`.
 * - `n` the same without a TTL (a duration under one second, as rlf's `MULTI INCRBY PTTL`):
 *   `INCRBY`, `PTTL`; the key keeps whatever TTL it had. Reply `{count, pttl}`.
 * - `s` set/block (rlf's `MULTI SET [EX] PTTL`): `SET key points EX seconds` when
 *   `seconds` > 0, else `SET key points` (which clears a TTL). Reply `{points, pttl}`.
 * - `g` get (rlf's `MULTI GET PTTL`): `{value, pttl}`, or nil for a missing key.
 * - `d` delete (rlf's `DEL`): the number of keys deleted.
 */
import { createHash } from 'node:crypto';

/** One operation's code, shared by the batch and the all-or-nothing script. */
const APPLY = `
local function apply(key, op, points, seconds)
  if op == 'i' then
    redis.call('SET', key, 0, 'EX', seconds, 'NX')
    local count = redis.call('INCRBY', key, points)
    local pttl = redis.call('PTTL', key)
    if pttl == -1 then
      redis.call('EXPIRE', key, seconds)
      pttl = 1000 * tonumber(seconds)
    end
    return {count, pttl}
  elseif op == 'n' then
    local count = redis.call('INCRBY', key, points)
    return {count, redis.call('PTTL', key)}
  elseif op == 's' then
    if tonumber(seconds) > 0 then
      redis.call('SET', key, points, 'EX', seconds)
    else
      redis.call('SET', key, points)
    end
    return {points, redis.call('PTTL', key)}
  elseif op == 'g' then
    local value = redis.call('GET', key)
    if not value then return false end
    return {value, redis.call('PTTL', key)}
  elseif op == 'd' then
    return redis.call('DEL', key)
  end
  return redis.error_reply('ERR unknown ratekit flexible operation ' .. tostring(op))
end
`;

/**
 * Operations in one call, in order (one alone, or a coalesced batch: every
 * call uses this one script, see redis-operations.ts): KEYS[n] is the n-th
 * operation's key; ARGV[3n-2], ARGV[3n-1], ARGV[3n] its operation, points
 * and seconds. Replies with one entry per operation: `{1, reply}` (`{count,
 * pttl}`; `{value, pttl}` or nil for a get; the number deleted), or
 * `{0, message}` when that operation failed (a key of another type, a value
 * that is not an integer): its error alone, the others still run, as they
 * would in separate calls.
 */
export const BATCH_SCRIPT = `${APPLY}
local replies = {}
for n = 1, #KEYS do
  local ok, reply = pcall(apply, KEYS[n], ARGV[3 * n - 2], ARGV[3 * n - 1], ARGV[3 * n])
  if ok then
    replies[n] = {1, reply}
  else
    if type(reply) == 'table' then reply = reply.err end
    replies[n] = {0, tostring(reply)}
  end
end
return replies
`;

/**
 * All or nothing over several keys: charges every key, or none.
 * KEYS[n]: the n-th limiter's key. ARGV[1]: the number of keys, then for
 * each key three arguments: the points to consume (an integer), the TTL in
 * whole seconds a new window gets (`0`: none), the limiter's `points` (its limit).
 *
 * First it reads each key's count (GET; a missing key counts 0), adds the
 * points of this entry and of the entries before it on the same key, and
 * checks that the sum is at most the limit. If one is over, it writes
 * nothing and replies `{0, sum₁, pttl₁, …}`: what each key would have held,
 * and its PTTL now (-2 for a missing key, -1 for one without a TTL).
 * Otherwise it runs each key's `i` operation (`n` without a TTL), exactly
 * as a lone consume, in order, and replies `{1, count₁, pttl₁, …}`.
 */
export const ALL_OR_NOTHING_SCRIPT = `${APPLY}
local n = tonumber(ARGV[1])
local over = false
local reply = {0}
local added = {}
for k = 1, n do
  local key = KEYS[k]
  local stored = redis.call('GET', key)
  local count = 0
  if stored then
    count = tonumber(stored)
    if count == nil then return redis.error_reply('ERR value is not an integer or out of range') end
  end
  local sum = count + (added[key] or 0) + tonumber(ARGV[3 * k - 1])
  added[key] = (added[key] or 0) + tonumber(ARGV[3 * k - 1])
  reply[2 * k] = sum
  reply[2 * k + 1] = redis.call('PTTL', key)
  if sum > tonumber(ARGV[3 * k + 1]) then over = true end
end
if over then return reply end
reply[1] = 1
for k = 1, n do
  local seconds = ARGV[3 * k]
  local op = 'i'
  if tonumber(seconds) <= 0 then op = 'n' end
  local result = apply(KEYS[k], op, ARGV[3 * k - 1], seconds)
  reply[2 * k] = result[1]
  reply[2 * k + 1] = result[2]
end
return reply
`;

/** The SHA-1 of a script, as EVALSHA names it. */
export function scriptSha(script: string): string {
  return createHash('sha1').update(script).digest('hex');
}

export const BATCH_SCRIPT_SHA = scriptSha(BATCH_SCRIPT);
export const ALL_OR_NOTHING_SCRIPT_SHA = scriptSha(ALL_OR_NOTHING_SCRIPT);
