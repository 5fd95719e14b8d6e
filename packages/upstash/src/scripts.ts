/**
 * The Lua of @ratekit/upstash: one script per operation, each reading and writing exactly the data
 * layout of `@upstash/ratelimit` 2.2.0 (the keys, the values, the TTLs), so the incumbent and this
 * package can decide on one identifier together.
 *
 * Written for this package from the incumbent's documented behaviour, not copied. Two differences
 * in the text, none in the data:
 * - no `#!lua flags=allow-key-locking` first line: Upstash accepts scripts without it (it then
 *   locks the whole database for the script, as open-source Redis always does), and open-source
 *   Redis 7.0 refuses the flag (`Unexpected flag in script shebang`), so these run on both;
 * - plain ASCII, so every runtime sends the same bytes and EVALSHA finds the same SHA-1.
 *
 * The dynamic limit key, when the limiter has `dynamicLimits`, is the last of KEYS (absent
 * otherwise). A `now` argument of `""` means "read the Redis server's clock" (`clock: 'server'`).
 *
 * Each script's SHA-1 is written out below (EVALSHA needs it, and computing it would need
 * `node:crypto` or an asynchronous Web Crypto call); `scripts.test.ts` checks every one.
 *
 * @module
 */

/** A script and its SHA-1 (hex), for EVALSHA with EVAL on `NOSCRIPT`. */
export interface LuaScript {
  readonly name: string;
  readonly script: string;
  readonly sha: string;
}

// The hot scripts' shared steps are written into each script's text (the functions below return Lua),
// not defined as Lua functions: a script batched by @ratekit/redis's scriptBatcher runs as a function's
// body, where a `local function` would be made again on every call.

/** Lua: `local limit`, the dynamic limit stored at `dynamicKey` when that key is given, else ARGV[1]. */
function effectiveLimit(dynamicKey: string): string {
  return `
local limit = tonumber(ARGV[1])
local dynamic = ${dynamicKey} and redis.call('GET', ${dynamicKey})
if dynamic then limit = tonumber(dynamic) end
`;
}

/** Lua: `local now`, the caller's `now` argument (ms, the Lua expression `given`), or the Redis server's clock when it is `""`. */
function nowMs(given: string): string {
  return `
local now
if ${given} ~= '' then
  now = tonumber(${given})
else
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
`;
}

/**
 * Lua: the expression `number` (a Lua expression naming a number) as an argument for `redis.call`,
 * stored as the very text Redis would store for the number itself, at less cost. Redis 7.0 turns a
 * Lua number argument into text with `%.17g`, which glibc computes in multiple precision: about
 * 2,800 instructions per number, a twentieth of a token-bucket decision. A whole number below
 * 10^15 in magnitude (not -0) has the same text under `%d`, which costs Lua's `string.format`
 * about a third less; any other number goes to Redis as a number, as before. So the values stay
 * byte for byte the incumbent's (`scripts.test.ts` compares the two texts).
 */
export function asArgument(number: string): string {
  return `(${number} % 1 == 0 and ${number} > -1e15 and ${number} < 1e15 and (${number} ~= 0 or 1 / ${number} > 0) and string.format('%d', ${number}) or ${number})`;
}

/**
 * Fixed window. KEYS: `<prefix>:<id>:<window number>` [, dynamic]. ARGV: limit, window ms,
 * increment. Returns `{used after the increment, effective limit}`. The key expires one window
 * after its first increment (as the incumbent's PEXPIRE does).
 */
export const FIXED_WINDOW_LIMIT_SCRIPT = `${effectiveLimit('KEYS[2]')}
local increment = tonumber(ARGV[3])
local used = redis.call('INCRBY', KEYS[1], ARGV[3])
if used == increment then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return {used, limit}
`;

/** Fixed window, read only. KEYS: key [, dynamic]. ARGV: limit. Returns `{limit - used, limit}`. */
export const FIXED_WINDOW_REMAINING_SCRIPT = `${effectiveLimit('KEYS[2]')}
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
return {limit - used, limit}
`;

/**
 * Lua: `local remaining`, the sliding window's decision on the counters of the current and the
 * previous window (the Lua expressions `currentKey`, `previousKey`), with `limit`, `now` and
 * `window` already set: the previous window's count weighs by the part of it still inside the
 * sliding window, rounded down; a refund (increment <= 0) is never refused; -1 when refused. The
 * current window's key expires two windows and one second after its first increment. `increment`
 * is the argument's text, handed to INCRBY as it came.
 */
function slide(currentKey: string, previousKey: string, increment: string): string {
  return `
local increment = tonumber(${increment})
local current = (redis.call('GET', ${currentKey}) or 0) + 0
local previous = (redis.call('GET', ${previousKey}) or 0) + 0
local elapsed = (now % window) / window
previous = math.floor((1 - elapsed) * previous)
local remaining = -1
if increment <= 0 or previous + current < limit then
  local after = redis.call('INCRBY', ${currentKey}, ${increment})
  if after == increment then
    redis.call('PEXPIRE', ${currentKey}, window * 2 + 1000)
  end
  remaining = limit - (after + previous)
end
`;
}

/**
 * Sliding window on the caller's clock. KEYS: current window key, previous window key
 * [, dynamic]. ARGV: limit, now (ms), window ms, increment. Returns `{remaining, limit}`
 * (remaining -1 when refused).
 */
export const SLIDING_WINDOW_LIMIT_SCRIPT = `${effectiveLimit('KEYS[3]')}
local now = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
${slide('KEYS[1]', 'KEYS[2]', 'ARGV[4]')}
return {remaining, limit}
`;

/**
 * Sliding window on the Redis server's clock. KEYS: `<prefix>:<id>` [, dynamic]; the window keys
 * (`<prefix>:<id>:<window number>`, the same names) are derived here from `TIME`, so they are
 * not declared in KEYS: fine on a single Redis and on Upstash, not on Redis Cluster (where the
 * incumbent's two window keys already hash to different slots). ARGV: limit, window ms,
 * increment. Returns `{remaining, limit, now}`.
 */
export const SLIDING_WINDOW_SERVER_CLOCK_LIMIT_SCRIPT = `${effectiveLimit('KEYS[2]')}${nowMs("''")}
local window = tonumber(ARGV[2])
local number = math.floor(now / window)
local currentKey = KEYS[1] .. ':' .. string.format('%d', number)
local previousKey = KEYS[1] .. ':' .. string.format('%d', number - 1)
${slide('currentKey', 'previousKey', 'ARGV[3]')}
return {remaining, limit, now}
`;

/** The sliding window's used count, read only: the current window's count and the previous one's weighted share. */
const SLIDING_WINDOW_USED = `
local function used(currentKey, previousKey, now, window)
  local current = tonumber(redis.call('GET', currentKey) or '0')
  local previous = tonumber(redis.call('GET', previousKey) or '0')
  local elapsed = (now % window) / window
  return math.floor((1 - elapsed) * previous) + current
end
`;

/**
 * Sliding window, read only, on the caller's clock. KEYS: current, previous [, dynamic]. ARGV:
 * limit, now (ms), window ms. Returns `{limit - used, limit}`.
 */
export const SLIDING_WINDOW_REMAINING_SCRIPT = `${effectiveLimit('KEYS[3]')}${SLIDING_WINDOW_USED}
return {limit - used(KEYS[1], KEYS[2], tonumber(ARGV[2]), tonumber(ARGV[3])), limit}
`;

/**
 * Sliding window, read only, on the server clock. KEYS: `<prefix>:<id>` [, dynamic] (the window
 * keys are built here, as in the server-clock limit script). ARGV: limit, window ms. Returns
 * `{limit - used, limit, now}`.
 */
export const SLIDING_WINDOW_SERVER_CLOCK_REMAINING_SCRIPT = `${effectiveLimit('KEYS[2]')}${nowMs("''")}${SLIDING_WINDOW_USED}
local window = tonumber(ARGV[2])
local number = math.floor(now / window)
local currentKey = KEYS[1] .. ':' .. string.format('%d', number)
local previousKey = KEYS[1] .. ':' .. string.format('%d', number - 1)
return {limit - used(currentKey, previousKey, now, window), limit, now}
`;

/**
 * Token bucket. KEYS: `<prefix>:<id>` (a hash of `refilledAt`, `tokens`) [, dynamic]. ARGV: max
 * tokens, interval ms, refill rate, now (ms, or "" for the server clock), tokens to take.
 * Whole intervals since `refilledAt` refill `refillRate` each, up to the limit; `refilledAt`
 * moves by whole intervals. A take larger than the tokens left is refused and writes nothing.
 * The hash expires when the bucket would be full again. Returns `{remaining (-1 refused),
 * next refill at, limit}`.
 */
export const TOKEN_BUCKET_LIMIT_SCRIPT = `${effectiveLimit('KEYS[2]')}${nowMs('ARGV[4]')}
local key = KEYS[1]
local interval = tonumber(ARGV[2])
local refillRate = tonumber(ARGV[3])
local take = tonumber(ARGV[5])

local state = redis.call('HMGET', key, 'refilledAt', 'tokens')
local refilledAt = now
local tokens = limit
-- whether refilledAt must be written: not while the stored one stands
local moved = true
if state[1] then
  -- arithmetic's own conversion, tonumber's without its second parse (and no entry in a batch's memo)
  refilledAt = state[1] + 0
  tokens = state[2] + 0
  moved = false
end

if now >= refilledAt + interval then
  local refills = math.floor((now - refilledAt) / interval)
  tokens = math.min(limit, tokens + refills * refillRate)
  refilledAt = refilledAt + refills * interval
  moved = true
end

if take > 0 and tokens < take then
  return {-1, refilledAt + interval, limit}
end

local remaining = tokens - take
-- the TTL in whole intervals, math.ceil(refills) of them: one interval (0 < refills <= 1) is ARGV[2]'s own text,
-- with nothing to format or round
local refills = (limit - remaining) / refillRate
if moved then
  redis.call('HSET', key, 'refilledAt', ${asArgument('refilledAt')}, 'tokens', ${asArgument('remaining')})
else
  redis.call('HSET', key, 'tokens', ${asArgument('remaining')})
end
if refills > 0 then
  if refills <= 1 then
    redis.call('PEXPIRE', key, ARGV[2])
  else
    local ttl = math.ceil(refills) * interval
    redis.call('PEXPIRE', key, ${asArgument('ttl')})
  end
end
return {remaining, refilledAt + interval, limit}
`;

/**
 * Token bucket, read only. KEYS: key [, dynamic]. ARGV: max tokens. Returns `{tokens,
 * refilledAt, limit}`, or `{limit, -1, limit}` for a bucket that does not exist.
 */
export const TOKEN_BUCKET_REMAINING_SCRIPT = `${effectiveLimit('KEYS[2]')}
local state = redis.call('HMGET', KEYS[1], 'refilledAt', 'tokens')
if not state[1] then
  return {limit, -1, limit}
end
return {tonumber(state[2]), tonumber(state[1]), limit}
`;

/**
 * Cached fixed window, the Redis side. KEYS: key. ARGV: window ms, increment. Returns the count
 * after the increment. Sets the key's expiry (one window) when it has none: the incumbent's
 * script means to on the first increment but never does (it compares the count with the
 * increment as a string), so its keys stay forever; this heals keys it created too.
 */
export const CACHED_FIXED_WINDOW_LIMIT_SCRIPT = `
local used = redis.call('INCRBY', KEYS[1], ARGV[2])
if redis.call('PTTL', KEYS[1]) == -1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return used
`;

/** Cached fixed window, read only. KEYS: key. Returns the count (0 when absent). */
export const CACHED_FIXED_WINDOW_REMAINING_SCRIPT = `
return tonumber(redis.call('GET', KEYS[1]) or '0')
`;

/** The sum of a flat HGETALL reply's values. */
const SUM_FIELDS = `
local function sum(fields)
  local total = 0
  for i = 2, #fields, 2 do
    total = total + tonumber(fields[i])
  end
  return total
end
`;

/**
 * Multi-region fixed window, one region. KEYS: `<prefix>:<id>:<window number>`, a hash of request
 * id -> tokens. ARGV: request id, window ms, tokens taken. Records the request, then returns the
 * hash (flat HGETALL); the hash expires one window after its first field.
 */
export const MULTI_FIXED_WINDOW_LIMIT_SCRIPT = `
local take = tonumber(ARGV[3])
redis.call('HSET', KEYS[1], ARGV[1], take)
local fields = redis.call('HGETALL', KEYS[1])
if #fields == 2 and tonumber(fields[2]) == take then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return fields
`;

/** Multi-region fixed window, read only. KEYS: key. Returns the hash (flat HGETALL). */
export const MULTI_FIXED_WINDOW_REMAINING_SCRIPT = `
return redis.call('HGETALL', KEYS[1])
`;

/**
 * Multi-region sliding window, one region. KEYS: current and previous window hashes. ARGV: limit,
 * now (ms), window ms, request id, tokens taken. Refuses (no write) when the previous window's
 * weighted sum, the current sum and the take exceed the limit; else records the request (the hash
 * expires two windows and a second after its first field). Returns `{current fields before the
 * write, previous fields, 1 or nil}`.
 */
export const MULTI_SLIDING_WINDOW_LIMIT_SCRIPT = `${SUM_FIELDS}
local limit = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local take = tonumber(ARGV[5])
local currentFields = redis.call('HGETALL', KEYS[1])
local previousFields = redis.call('HGETALL', KEYS[2])
local current = sum(currentFields)
local previous = sum(previousFields)
local elapsed = (now % window) / window
if take > 0 and previous * (1 - elapsed) + current + take > limit then
  return {currentFields, previousFields, false}
end
redis.call('HSET', KEYS[1], ARGV[4], take)
if current == 0 then
  redis.call('PEXPIRE', KEYS[1], window * 2 + 1000)
end
return {currentFields, previousFields, true}
`;

/**
 * Multi-region sliding window, read only. KEYS: current, previous. ARGV: now (ms), window ms.
 * Returns the used count, the previous window weighted and rounded down.
 */
export const MULTI_SLIDING_WINDOW_REMAINING_SCRIPT = `${SUM_FIELDS}
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local current = sum(redis.call('HGETALL', KEYS[1]))
local previous = sum(redis.call('HGETALL', KEYS[2]))
local elapsed = (now % window) / window
return math.floor((1 - elapsed) * previous) + current
`;

/** Multi-region sync: KEYS: the window hash. ARGV: request ids, then the tokens to record for each. */
export const MULTI_SYNC_SCRIPT = `
local take = ARGV[#ARGV]
for i = 1, #ARGV - 1 do
  redis.call('HSET', KEYS[1], ARGV[i], take)
end
return #ARGV - 1
`;

/**
 * Deletes every key matching the glob pattern KEYS[1] (`<prefix>:<id>:*`, or the token bucket's
 * own key), with SCAN, as the incumbent's `resetUsedTokens` does. Returns how many were deleted.
 */
export const RESET_SCRIPT = `
local cursor = '0'
local deleted = 0
repeat
  local page = redis.call('SCAN', cursor, 'MATCH', KEYS[1], 'COUNT', 1000)
  cursor = page[1]
  for _, key in ipairs(page[2]) do
    deleted = deleted + redis.call('DEL', key)
  end
until cursor == '0'
return deleted
`;

/**
 * The global dynamic limit. KEYS: `<prefix>:dynamic:global`. ARGV: `get`, `set` and the limit, or
 * `del`. The value is the limit's decimal text, as `@upstash/redis` writes a number; no expiry.
 */
export const DYNAMIC_LIMIT_SCRIPT = `
local op = ARGV[1]
if op == 'set' then
  return redis.call('SET', KEYS[1], ARGV[2])
elseif op == 'del' then
  return redis.call('DEL', KEYS[1])
end
return redis.call('GET', KEYS[1])
`;

/**
 * The deny-list check of `limit()` with `enableProtection`. KEYS: `<prefix>:denyList:all`,
 * `<prefix>:ipDenyListStatus`. ARGV: the values to check (identifier, ip, user agent, country:
 * those given). Returns `{membership of each value (1/0), TTL of the status key}`. A status key
 * that is absent (TTL -2: never loaded, or expired at the daily refresh) becomes `pending` for
 * 30 s, so that only the caller who saw -2 downloads the IP list.
 */
export const DENY_LIST_CHECK_SCRIPT = `
local found = redis.call('SMISMEMBER', KEYS[1], unpack(ARGV))
local statusTtl = redis.call('TTL', KEYS[2])
if statusTtl == -2 then
  redis.call('SET', KEYS[2], 'pending', 'EX', 30)
end
return {found, statusTtl}
`;

/**
 * Replaces the IP deny list. KEYS: `<prefix>:denyList:all`, `<prefix>:denyList:ipDenyList`,
 * `<prefix>:ipDenyListStatus`. ARGV: the status key's TTL in ms, then the IPs. The old IPs leave
 * the union set, the IP set is rebuilt without the values already in the user's own lists, joins
 * the union set again, and the status becomes `valid` until ARGV[1] ms from now. Returns the
 * first five replies of the incumbent's MULTI, `{SDIFFSTORE, DEL, SADD, SDIFFSTORE, SUNIONSTORE}`
 * (the caller adds the sixth, SET's `OK`: a status nested in an array does not reach every client
 * as `OK`). SADD goes in slices of 1000 (Lua's `unpack` limit).
 */
export const IP_DENY_LIST_UPDATE_SCRIPT = `
local all, ips, status = KEYS[1], KEYS[2], KEYS[3]
local withoutOld = redis.call('SDIFFSTORE', all, all, ips)
local deleted = redis.call('DEL', ips)
local added = 0
for first = 2, #ARGV, 1000 do
  added = added + redis.call('SADD', ips, unpack(ARGV, first, math.min(first + 999, #ARGV)))
end
local kept = redis.call('SDIFFSTORE', ips, ips, all)
local union = redis.call('SUNIONSTORE', all, all, ips)
redis.call('SET', status, 'valid', 'PX', ARGV[1])
return {withoutOld, deleted, added, kept, union}
`;

/**
 * Turns the IP deny list off. KEYS: as {@link IP_DENY_LIST_UPDATE_SCRIPT}'s. The IPs leave the
 * union set, the IP set is deleted and the status becomes `disabled` without a TTL (so the check
 * sees -1 and never refreshes). Returns the incumbent's first two MULTI replies, `{SDIFFSTORE, DEL}`.
 */
export const IP_DENY_LIST_DISABLE_SCRIPT = `
local all, ips, status = KEYS[1], KEYS[2], KEYS[3]
local withoutIps = redis.call('SDIFFSTORE', all, all, ips)
local deleted = redis.call('DEL', ips)
redis.call('SET', status, 'disabled')
return {withoutIps, deleted}
`;

function lua(name: string, script: string, sha: string): LuaScript {
  return { name, script, sha };
}

/** Every script of the package, with its SHA-1. */
export const SCRIPTS = {
  fixedWindowLimit: lua('fixedWindowLimit', FIXED_WINDOW_LIMIT_SCRIPT, '719ad603a44a9ed3fecf48a8add5852fb613521f'),
  fixedWindowRemaining: lua('fixedWindowRemaining', FIXED_WINDOW_REMAINING_SCRIPT, '1cdf1677c1574532d5b5d046af50610448560330'),
  slidingWindowLimit: lua('slidingWindowLimit', SLIDING_WINDOW_LIMIT_SCRIPT, '8e0bfcedc5e41b3953ae65eb5d9458db899ff7af'),
  slidingWindowServerClockLimit: lua('slidingWindowServerClockLimit', SLIDING_WINDOW_SERVER_CLOCK_LIMIT_SCRIPT, 'c9cd1821df6f957062c523a6476955ca3334d894'),
  slidingWindowRemaining: lua('slidingWindowRemaining', SLIDING_WINDOW_REMAINING_SCRIPT, 'dabde1bdbb5e9de8567c666d78d3a8623f3b2c6d'),
  slidingWindowServerClockRemaining: lua('slidingWindowServerClockRemaining', SLIDING_WINDOW_SERVER_CLOCK_REMAINING_SCRIPT, 'ba4ecb59145363b653342749a54cc763e8ba453a'),
  tokenBucketLimit: lua('tokenBucketLimit', TOKEN_BUCKET_LIMIT_SCRIPT, '8fd2cd200e7995e367e6f155f1075619fd839c38'),
  tokenBucketRemaining: lua('tokenBucketRemaining', TOKEN_BUCKET_REMAINING_SCRIPT, 'd5b13024e81244e153ed3e89e79d354e155ea9ed'),
  cachedFixedWindowLimit: lua('cachedFixedWindowLimit', CACHED_FIXED_WINDOW_LIMIT_SCRIPT, 'c713441250dc545c193e9fd40ac2f685c4b4b517'),
  cachedFixedWindowRemaining: lua('cachedFixedWindowRemaining', CACHED_FIXED_WINDOW_REMAINING_SCRIPT, 'ee8cafa5695cf6087a7677bff955e0465eb26611'),
  multiFixedWindowLimit: lua('multiFixedWindowLimit', MULTI_FIXED_WINDOW_LIMIT_SCRIPT, '89dd6c0ea3850b1d866c7a8df690e4ece3e46b73'),
  multiFixedWindowRemaining: lua('multiFixedWindowRemaining', MULTI_FIXED_WINDOW_REMAINING_SCRIPT, '423b4826276301a30ff4871d689d0eeed4e3c81f'),
  multiSlidingWindowLimit: lua('multiSlidingWindowLimit', MULTI_SLIDING_WINDOW_LIMIT_SCRIPT, '311e3f0cf24f8ffe965a9d53be49be984191a7ca'),
  multiSlidingWindowRemaining: lua('multiSlidingWindowRemaining', MULTI_SLIDING_WINDOW_REMAINING_SCRIPT, '73b94de9c32207b516e085c58104388973f13762'),
  multiSync: lua('multiSync', MULTI_SYNC_SCRIPT, '70bf6f1751d901405bfa1f5d29d49a09df17c748'),
  reset: lua('reset', RESET_SCRIPT, '0e4f30206a5de999a9edc767eb09456d1c8ab90e'),
  dynamicLimit: lua('dynamicLimit', DYNAMIC_LIMIT_SCRIPT, 'eac4f424acd6eec90e3ac1aa02feecb3e9a50e5f'),
  denyListCheck: lua('denyListCheck', DENY_LIST_CHECK_SCRIPT, 'db8649ba515ce808113d9b1dca21ac3ce3a945da'),
  ipDenyListUpdate: lua('ipDenyListUpdate', IP_DENY_LIST_UPDATE_SCRIPT, 'f7d6fc4ead3ac0455bc8d2e8d1f84b0967752a70'),
  ipDenyListDisable: lua('ipDenyListDisable', IP_DENY_LIST_DISABLE_SCRIPT, '5e7c9276b6e3666455349db5437bb36db4fbc664'),
} as const;
