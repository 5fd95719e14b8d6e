/**
 * The Lua of the Redis store: the decision code, and the script forms sent with EVAL and EVALSHA.
 * Plain text only (no Node module): the Upstash store (`@ratekit/redis/upstash`) sends the very same
 * scripts from any runtime; `scripts.ts` adds their SHA-1 digests and the function library, computed
 * with `node:crypto` for the TCP store.
 *
 * @module
 */
/**
 * Lua: `fmt(x)`, a number as the exact decimal text a state is stored in. Its upvalues `floor`
 * and `format` are defined by the code it is placed in ({@link DECISION_CODE}, and the script
 * form's fast path).
 */
const FMT = String.raw`
-- Numbers in full, as exact decimals: integers as such; a positive double whose fraction is a
-- whole number of 2^-15 (every one from 2^37 up: epoch milliseconds, TATs) as its integer part and
-- the fraction's exact 15 decimals, m / 2^15 = m * 5^15 / 10^15 (m * 5^15 < 10^15: exact), two
-- integer conversions; any other with 17 significant digits. %.17g costs Redis about as much as
-- the rest of a decision (glibc converts in multiple precision); every form reads back exactly.
local function fmt(x)
  local i = floor(x)
  if i == x then
    if x > -1e15 and x < 1e15 then return format('%d', x) end
  elseif x > 0 and x < 1e15 then
    local m = (x - i) * 32768
    if m == floor(m) then return format('%d.%015d', i, m * 30517578125) end
  end
  return format('%.17g', x)
end
`;

/**
 * Lua: `windowIncrement(key, limit, W, c)`, a consume of a whole cost on a fixed window in the
 * expiry layout. Its upvalues `call`, `pcall`, `type`, `format` and `fmt` are defined by the code it
 * is placed in, as {@link FMT}'s.
 */
const WINDOW_INCREMENT = String.raw`
-- Fixed window: the count is the value, the window ends with the key (start = PTTL - windowMs).
-- A consume of a whole cost is INCR(BY) then PTTL, with DECR(BY) when refused: two commands when
-- admitted, three when a window starts. Returns nil, having changed nothing, when INCRBY refuses
-- the stored count (a fractional one): windowReadWrite decides then. Redis formats a number
-- argument with %.17g, which costs it about as much as INCRBY itself (bench/icount/redis.mjs): a
-- cost of 1 goes as INCR and DECR, which take none, any other as text.
local function windowIncrement(key, limit, W, c)
  local n
  if c == 1 then n = pcall('INCR', key) else n = pcall('INCRBY', key, format('%d', c)) end
  if type(n) ~= 'number' then return nil end
  local t = call('PTTL', key)
  if t > 0 then
    local used = n - c
    local verdict = '1'
    if not (c <= limit - used + 1e-9) then
      if c == 1 then call('DECR', key) else call('DECRBY', key, format('%d', c)) end
      verdict = '0'
    end
    -- The whole reply in one string.format of whole numbers: a third of what '..' costs on
    -- numbers (%.14g, twice), and one string made instead of two.
    if used < 1e15 and W < 1e15 then return format('= %s %d,%d', verdict, t - W, used) end
    return '= ' .. verdict .. ' ' .. fmt(t - W) .. ',' .. fmt(used)
  end
  -- No window (INCRBY made the key) or one that ends now (t = 0, as core's step reads it): a new one.
  if c <= limit + 1e-9 then
    -- INCRBY made the key with the count (n = c): only its expiry is missing.
    if n == c then call('PEXPIRE', key, fmt(W)) else call('SET', key, fmt(c), 'PX', fmt(W)) end
    return '= 1 -'
  end
  call('DEL', key)
  return '= 0 -'
end
`;

/**
 * The decision code: one whole decision (every limit of a policy, all or
 * nothing) in one atomic call. This Lua source defines helpers and
 * `decide(key, argument)`; it is sent in two forms: on Redis 7 and later the function
 * library {@link DECISION_LIBRARY}, called with
 * `FCALL <DECISION_FUNCTION> 1 <key> <argument>`; on older servers (and
 * when functions are refused) the script {@link DECISION_SCRIPT}, called
 * with `EVALSHA <DECISION_SCRIPT_SHA> 1 <key> <argument>`. Both take the
 * same key and argument and give the same reply. It ports the verdict and the state changes of
 * @ratekit/core's `algorithms/*.ts` (`step` → allowed, next, nextIfRefused;
 * `refund`; `ttlMs`) and `policy.ts`; the differential tests hold it to them.
 * It replies with the states it read, and the store builds the decision
 * from them with core's own `evaluatePolicy`, so every reported number comes
 * from the same code as the in-memory store's (see `store.ts`).
 *
 * KEYS
 *   KEYS[1]  the hash of one (namespace, key): `<prefix>{<namespace length>:<namespace>:<key>}`,
 *            one field per limit id, each holding that limit's state as
 *            comma-separated numbers (the `LimitState` array); for a
 *            one-limit policy in the expiry layout (below), that limit's key.
 *   KEYS[2…] in a policy of several limits, the keys of its limits in the
 *            expiry layout, in the policy's order. Every key of one
 *            (namespace, key) has the same hash tag, so one Cluster slot.
 *
 * The expiry layout (`~` ids, on the server clock only): a GCRA limit whose
 * emission interval and tolerance are whole ms, or a fixed window of whole
 * ms, without a block, whose id pins its parameters, is kept in a string key
 * of its own, `<prefix><id byte length>:<id>{…}` (an unnamed id holds no braces),
 * whose expiry is the state's end. GCRA: the PTTL is the TAT − now, the value
 * unused. Fixed window: the value is the count, the window ends with the key.
 * So a one-limit policy needs no TIME: it is decided at now = 0, times
 * counted from the server's now, and replies `=` for its now. A consume of 1
 * is two commands (PTTL, PEXPIRE; INCR, PTTL; SET or PEXPIRE when the key
 * is new), a refusal one (GCRA) or three (INCR, PTTL, DECR). A policy
 * of several limits all in the layout is decided at now = 0 too. In a
 * policy of several limits with some in the hash, the state is read as
 * TIME's now + PTTL (the key's time is the script's start, within a
 * millisecond of TIME) and the reply carries it as the hash field would.
 *
 * ARGV
 *   ARGV[1]  the whole request in one string (every argument costs the
 *            client and the server about as much as a small script: one
 *            argument is the cheapest), tokens separated by one space:
 *
 *     <mode> <cost> <now> then per limit, in the order of the policy: <algorithm> <parameters…> <id>
 *
 *   mode     `consume`, `peek` or `refund`
 *   cost     a decimal number ≥ 0
 *   now      Unix epoch ms from the caller's clock, or `-` to read the
 *            server clock (`TIME`, truncated to the millisecond), or `+`:
 *            the same, with TIME in the reply of the expiry layout (below)
 *   parameters, each algorithm's own, derived by the store with core's
 *   arithmetic (`T` is `emissionIntervalMs`, `tau` is `burst × T`) and sent
 *   as shortest round-trip decimals, so the script computes with the very
 *   same doubles:
 *     gcra T tau                 delay T tau maxDelayMs refusedPenaltyCapMs (`-` when unset)
 *     fixed-window limit windowMs, sliding-window limit windowMs, sliding-log limit windowMs
 *     token-bucket burst T limit windowMs refill (`continuous` or `interval`)
 *   id       `<byte length>:<id>`, or `<byte length>=<id>` when the id does not pin the
 *            parameters (a named limit: its parameters may change while its state
 *            lives on, e.g. a plan upgrade): the hash field that holds the limit's
 *            state; length-prefixed, since a limit's name may hold spaces;
 *            `<byte length>~<id>` for a limit in the expiry layout (see KEYS).
 *
 *   A limit with `blockDurationMs` names its algorithm `<algorithm>/<blockDurationMs>`,
 *   e.g. `fixed-window/60000 5 900000 …`.
 *
 *   For example `consume 1 - gcra 100 1000 20:gcra:1000:100000:10:…`.
 *
 * Reply: one bulk string (it parses faster than an array), space-separated:
 *   now  verdict  state₁ … stateₙ
 * `now` is the clock reading used (`=` for a one-limit policy in the expiry
 * layout, whose state counts from now = 0, or `=<seconds>/<microseconds>`
 * when the argument's clock is `+`, which asks it for TIME too: the store
 * reads it once a second, to report the server's time in its decisions):
 * on the server clock, Redis TIME as it
 * came, `<seconds>/<microseconds>` (the script's now is seconds × 1000 +
 * floor(µs / 1000), which the store computes the same way: formatting a
 * number costs Redis more than concatenating two texts); in caller-clock
 * mode the caller's `now` itself. `verdict` is `1` (admitted) or `0`
 * (refused) for consume and `-` for peek and refund, which always answer;
 * each state is the field as read before any write, `-` when absent.
 *
 * States are stored as exact decimals, so every double comes back exactly
 * (Lua would truncate numbers returned as numbers): whole numbers as
 * integers; a positive number whose fraction is a whole number of 2^-15
 * (every double from 2^37 up, so every TAT and epoch time) as its integer
 * part and the fraction's exact 15 decimals, written with integer
 * conversions; any other with 17 significant digits (`%.17g`, which costs
 * Redis as much as a redis.call). All are plain decimals: states written by
 * earlier versions of this code read the same.
 *
 * Blocks (`blockDurationMs`, core's `policy.ts` and `algorithms/block.ts`):
 * a blocked state is the limit's state followed by one more number, the
 * blocked-until time (its length tells it apart). A limit with a block whose
 * state is blocked refuses and writes nothing; one that refuses otherwise
 * stores its state blocked until now + blockDurationMs. A refund keeps a
 * block that has not ended. A blocked state's `ttlMs` runs at least to the
 * end of its block.
 *
 * Writes (consume and refund): the fields whose state changed, in one HSET
 * (HDEL for a state that is gone). Expiry runs on a grid of whole slacks
 * ({@link TTL_SLACK_MS}, one second): a state that becomes as good as none
 * at `end` (now + `ttlMs`) is covered once the key lives until
 * (floor(end / slack) + 2) × slack, more than `end` + slack and at most two
 * slacks past `end`. The invariant: every stored state is covered. On the
 * server clock, when every id pins its limit's parameters, a write whose
 * states end in no later grid second than the ones they replace (a window
 * counter within its window, a GCRA or token bucket whose end moved less
 * than into the next second, a refund) is already covered and does not
 * touch the TTL. Otherwise (and always on the caller's clock, which the
 * key's TTL does not follow, for named limits, and for a state new to its
 * field) the TTL is read and, if it is below the longest one's cover,
 * raised to that plus headroom (an eighth, at least two slacks more), so a
 * busy key is not re-expired on every request, nor on every grid second. TTLs are never
 * lowered. Peek writes nothing.
 *
 * Cost: O(number of limits) and 3–5 Redis calls (TIME, HGET/HMGET, HSET;
 * PTTL when a state ends in a later second than the one it replaces,
 * sometimes PEXPIRE), except the sliding log, which is O(entries ≤ limit).
 * A consume of one limit without a block (GCRA, fixed and sliding window,
 * continuous token bucket) takes a fast path: the same arithmetic written
 * out for its algorithm, reached straight from the cache for consume 1 on
 * the server clock. The function library defines
 * its helpers once, when it is loaded, and keeps the parsed limits of the
 * last (at most 100) distinct argument texts it has seen, so a decision
 * does not parse its policy again; the script form redefines its helpers
 * and parses the argument on every call, after a fast path of its own for
 * consume 1 of one fixed window in the expiry layout ({@link DECISION_SCRIPT}).
 * Needs Redis ≥ 5 (TIME before
 * writes relies on effects replication); functions need Redis ≥ 7.
 */
export const DECISION_CODE = String.raw`
-- Everything at the top level runs once when the function library is loaded, and on every
-- call in the script form; decide() runs on every call in both. Dearest per call are
-- redis.call, string.format, tonumber and tables: a stored number is read with Lua's own
-- string-to-number coercion (x + 0, the same conversion as tonumber, without its call).
local TTL_SLACK_MS = 1000

-- Set by the first call (init): while a function library loads, Redis gives it only its
-- own API, not math, string or redis.call. Upvalues are cheaper than globals at run time.
local floor, ceil, max, min, abs, tonumber, tostring, type, error, unpack
local format, match, sub, gmatch, concat, find, call, pcall, protect
local function init()
  floor, ceil, max, min, abs = math.floor, math.ceil, math.max, math.min, math.abs
  tonumber, tostring, type, error, unpack = _G.tonumber, _G.tostring, _G.type, _G.error, _G.unpack
  format, match, sub, gmatch, concat, find = string.format, string.match, string.sub, string.gmatch, table.concat, string.find
  call, pcall = redis.call, redis.pcall
  -- Lua's own pcall (pcall above is redis.pcall): catches any error of one decision of a batch.
  protect = _G.pcall
end

-- The fast paths by algorithm (filled below, with their helpers).
local FAST = {}
-- expiryConsumeOne (defined below with the expiry layout's helpers).
local EXPIRY_CONSUME_ONE

-- The limits of a request, parsed: P[i] the algorithm then its parameters as numbers
-- (gcra, delay: T, tau (delay: maxDelayMs, refusedPenaltyCapMs or nil);
-- token-bucket: burst, T, limit, windowMs, interval refill?; windows: limit, windowMs),
-- field[i] the hash field; block[i] the limit's blockDurationMs (0: none);
-- pinned: whether every id pins its parameters.
local function parseLimits(spec, pos)
  local P, field, block, count, pinned = {}, {}, {}, 0, true
  -- expiry[i]: the limit is kept in a key of its own (KEYS[1 + its rank among them], or KEYS[1]
  -- for a one-limit policy); hashed: the fields of the others, read with one HMGET.
  local expiry, hashed, expiryCount = {}, {}, 0
  local specLength = #spec
  while pos <= specLength do
    -- Two parameters (GCRA and the windows) in one match; the others have more.
    local algorithm, a, b, n, sep, at = match(spec, '^ (%S+) (%S+) (%S+) (%d+)([:=~])()', pos)
    -- A limit with blockDurationMs names its algorithm <algorithm>/<blockDurationMs>.
    local blockMs = 0
    if algorithm ~= nil and find(algorithm, '/', 1, true) then
      local name, ms = match(algorithm, '^([^/]+)/(%S+)$')
      algorithm, blockMs = name, tonumber(ms)
    end
    local p
    if algorithm == 'gcra' or algorithm == 'fixed-window' or algorithm == 'sliding-window' or algorithm == 'sliding-log' then
      p = { algorithm, tonumber(a), tonumber(b) }
    else
      local c, d, e
      algorithm, at = match(spec, '^ ([^%s/]+)()', pos)
      if algorithm ~= nil and sub(spec, at, at) == '/' then
        local ms
        ms, at = match(spec, '^/(%S+)()', at)
        blockMs = tonumber(ms)
      end
      if algorithm == 'token-bucket' then
        a, b, c, d, e, n, sep, at = match(spec, '^ (%S+) (%S+) (%S+) (%S+) (%a+) (%d+)([:=~])()', at)
        p = { algorithm, tonumber(a), tonumber(b), tonumber(c), tonumber(d), e == 'interval' }
      elseif algorithm == 'delay' then
        a, b, c, d, n, sep, at = match(spec, '^ (%S+) (%S+) (%S+) (%S+) (%d+)([:=~])()', at)
        p = { algorithm, tonumber(a), tonumber(b), tonumber(c), tonumber(d) }
      else
        error('ratekit: unknown algorithm ' .. tostring(algorithm))
      end
    end
    if at == nil then error('ratekit: malformed arguments for ' .. algorithm) end
    if sep == '=' then pinned = false end
    n = tonumber(n)
    count = count + 1
    P[count] = p
    field[count] = sub(spec, at, at + n - 1)
    block[count] = blockMs
    if sep == '~' then
      if blockMs ~= 0 or (algorithm ~= 'gcra' and algorithm ~= 'fixed-window') then error('ratekit: no expiry layout for ' .. algorithm) end
      expiryCount = expiryCount + 1
      expiry[count] = expiryCount + 1
    else
      hashed[#hashed + 1] = field[count]
    end
    pos = at + n
  end
  local limits = { P = P, field = field, block = block, count = count, pinned = pinned, expiry = expiry, hashed = hashed, expiryCount = expiryCount }
  local a = P[1] and P[1][1]
  if count == 1 and expiry[1] then
    -- One limit in the expiry layout: its key is KEYS[1]; consume 1 is written out (expiryConsumeOne).
    expiry[1] = 1
    limits.expiryOne = EXPIRY_CONSUME_ONE(P[1])
  elseif count == 1 and block[1] == 0 and (a == 'gcra' or a == 'fixed-window' or a == 'sliding-window' or (a == 'token-bucket' and not P[1][6])) then
    -- One limit without a block: its consume has a fast path (FAST, below), chosen here once.
    limits.fast, limits.p1, limits.f1 = FAST[a], P[1], field[1]
  end
  return limits
end

-- Parsed limits by argument text (see decide), emptied when it reaches 100 entries: kept
-- between calls by a function library, new on every call of the script.
local cache, cached = {}, 0

-- Keeps parsed limits under their text, starting the cache over when it is full; returns them.
local function remember(text, limits)
  if cached >= 100 then cache, cached = {}, 0 end
  cache[text], cached = limits, cached + 1
  return limits
end

-- The length of each algorithm's state without a block (core's algorithms/block.ts).
local BASE_LENGTH = { gcra = 1, delay = 1, ['fixed-window'] = 2, ['token-bucket'] = 2, ['sliding-window'] = 3 }

-- A stored state: a number for GCRA and delay ([tatMs]), else a table of numbers; nil when
-- absent. Second result: the blocked-until time the state carries (block.ts: one extra number
-- after the algorithm's state; for the sliding log, an odd one), or nil.
local function readState(p, r)
  if not r then return nil end
  local algorithm = p[1]
  if algorithm == 'gcra' or algorithm == 'delay' then
    if not find(r, ',', 1, true) then return r + 0 end
    local x, y = match(r, '^([^,]+),([^,]+)$')
    return x + 0, y + 0
  end
  if algorithm == 'fixed-window' or algorithm == 'token-bucket' then
    local x, y = match(r, '^([^,]+),([^,]+)$')
    if x ~= nil then return { x + 0, y + 0 } end
  elseif algorithm == 'sliding-window' then
    local x, y, z = match(r, '^([^,]+),([^,]+),([^,]+)$')
    if x ~= nil then return { x + 0, y + 0, z + 0 } end
  end
  local s = {}
  for part in gmatch(r, '[^,]+') do s[#s + 1] = part + 0 end
  local n = #s
  if (algorithm == 'sliding-log' and n % 2 == 1) or (algorithm ~= 'sliding-log' and n > BASE_LENGTH[algorithm]) then
    local untilMs = s[n]
    s[n] = nil
    return s, untilMs
  end
  return s
end

-- token-bucket.ts: the level at now and the refill timestamp to store.
local function tbRefill(p, s, now)
  if s == nil then return p[2], now end
  local tokens, atMs = s[1], s[2]
  local elapsed = max(0, now - atMs)
  if not p[6] then return min(p[2], tokens + elapsed / p[3]), max(atMs, now) end
  local intervals = floor(elapsed / p[5])
  if intervals == 0 then return tokens, atMs end
  return min(p[2], tokens + intervals * p[4]), atMs + intervals * p[5]
end

-- Algorithm.step, the verdict and the states only: allowed, next, nextIfRefused.
local function step(p, s, c, now)
  local algorithm = p[1]
  if algorithm == 'gcra' or algorithm == 'delay' then
    local T, tau = p[2], p[3]
    local tat = now
    if s ~= nil then tat = max(s, now) end
    local newTat = tat + c * T
    -- tolerance.ts: tatSlackMs.
    local backlog = max(0, newTat - now) / T
    local slack = 1e-9 * T + (backlog + 1) * abs(newTat) * 2.220446049250313e-16
    if algorithm == 'gcra' then return newTat - now <= tau + slack, newTat, nil end
    local waitMs = newTat - tau - now
    if waitMs <= slack then waitMs = 0 end
    local ifRefused = nil
    if p[5] ~= nil then ifRefused = max(tat, min(newTat, now + p[5])) end
    return waitMs <= p[4] + slack, newTat, ifRefused
  elseif algorithm == 'fixed-window' then
    local startMs, used = now, 0
    if s ~= nil and now < s[1] + p[3] then startMs = s[1]; used = s[2] end
    return c <= p[2] - used + 1e-9, { startMs, used + c }, nil
  elseif algorithm == 'sliding-window' then
    local W = p[3]
    local startMs = floor(now / W) * W
    local previous, current = 0, 0
    if s ~= nil then
      if s[1] == startMs then previous = s[2]; current = s[3]
      elseif s[1] == startMs - W then previous = s[3] end
    end
    local estimate = (previous * (W - (now - startMs))) / W + current
    return estimate + c <= p[2] + 1e-9, { startMs, previous, current + c }, nil
  elseif algorithm == 'sliding-log' then
    local live, n, sum = {}, 0, 0
    if s ~= nil then
      local cutoff = now - p[3]
      for j = 1, #s, 2 do
        if s[j] > cutoff then
          live[n + 1] = s[j]
          live[n + 2] = s[j + 1]
          n = n + 2
          sum = sum + s[j + 1]
        end
      end
    end
    local allowed = sum + c <= p[2] + 1e-9
    if not (c > 0) then return allowed, live, nil end
    if n > 0 and live[n - 1] == now then live[n] = live[n] + c else live[n + 1] = now; live[n + 2] = c end
    return allowed, live, nil
  end
  local tokens, atMs = tbRefill(p, s, now)
  return c <= tokens + 1e-9, { tokens - c, atMs }, nil
end

-- Algorithm.ttlMs: ms after now at which s is as good as no state.
local function ttl(p, s, now)
  local algorithm = p[1]
  if algorithm == 'gcra' or algorithm == 'delay' then return s - now end
  if algorithm == 'fixed-window' then return s[1] + p[3] - now end
  if algorithm == 'sliding-window' then return s[1] + 2 * p[3] - now end
  if algorithm == 'sliding-log' then
    if #s == 0 then return 0 end
    return s[#s - 1] + p[3] - now
  end
  local tokens, atMs = tbRefill(p, s, now)
  local missing = p[2] - tokens
  if missing <= 1e-9 then return 0 end
  if not p[6] then return missing * p[3] end
  return atMs + ceil(missing / p[4] - 1e-9) * p[5] - now
end

-- Algorithm.refund: the state after giving c back (nil: no state).
local function refund(p, s, c, now)
  local algorithm = p[1]
  if algorithm == 'gcra' or algorithm == 'delay' then
    if s == nil then return nil end
    local tat = s - c * p[2]
    if tat <= now then return nil end
    return tat
  elseif algorithm == 'fixed-window' then
    if s == nil or now >= s[1] + p[3] then return s end
    return { s[1], max(0, s[2] - c) }
  elseif algorithm == 'sliding-window' then
    if s == nil then return nil end
    local W = p[3]
    local startMs = floor(now / W) * W
    local previous, current = 0, 0
    if s[1] == startMs then previous = s[2]; current = s[3]
    elseif s[1] == startMs - W then previous = s[3] end
    return { startMs, previous, max(0, current - c) }
  elseif algorithm == 'sliding-log' then
    local live = {}
    if s ~= nil then
      local cutoff = now - p[3]
      for j = 1, #s, 2 do
        if s[j] > cutoff then live[#live + 1] = s[j]; live[#live + 1] = s[j + 1] end
      end
    end
    local owed = c
    while owed > 0 and #live > 0 do
      local n = #live
      local last = live[n]
      if last > owed then
        live[n] = last - owed
        owed = 0
      else
        live[n] = nil
        live[n - 1] = nil
        owed = owed - last
      end
    end
    return live
  end
  local tokens, atMs = tbRefill(p, s, now)
  return { min(p[2], tokens + c), atMs }
end

${FMT}
-- A state to store as text: a number (GCRA, delay) or numbers joined by commas; a blocked
-- state ({ blocked = true, s = state, u = blockedUntilMs }) is its state then the time.
local function encode(w)
  if type(w) ~= 'table' then return fmt(w) end
  if w.blocked then
    local s = w.s
    if type(s) == 'table' and #s == 0 then return fmt(w.u) end
    return encode(s) .. ',' .. fmt(w.u)
  end
  local encoded = fmt(w[1])
  for j = 2, #w do encoded = encoded .. ',' .. fmt(w[j]) end
  return encoded
end

-- A write that deletes the field: no state (false), or an empty sliding log.
local function gone(w)
  return w == false or (type(w) == 'table' and not w.blocked and #w == 0)
end

-- ttl() of a state, a blocked state or a state read with its block u: at least until the block ends.
local function ttlOf(p, w, now, u)
  if type(w) == 'table' and w.blocked then u = w.u; w = w.s end
  local t = 0
  if w ~= nil then t = ttl(p, w, now) end
  if u ~= nil and u - now > t then t = u - now end
  return t
end

-- The state to store after giving c back: a block that has not ended stays (policy.ts refundLimit).
local function refundBlocked(p, s, u, c, now)
  local w = refund(p, s, c, now)
  if u == nil or u <= now then return w end
  if w == nil then
    local _, z = step(p, nil, 0, now)
    w = z
  end
  return { blocked = true, s = w, u = u }
end

-- Algorithm.step honouring a block (policy.ts stepLimit, refusalWrite): allowed, the state to
-- store if admitted, the state to store if refused (nil: none). A limit with a block (b > 0)
-- whose state is blocked (u > now) refuses and writes nothing; one that refuses otherwise stores
-- its state (its penalty included) blocked until now + b.
local function stepBlocked(p, s, u, b, c, now)
  if b > 0 and u ~= nil and u > now then return false, nil, nil end
  local ok, nx, nr = step(p, s, c, now)
  if ok or b == 0 then return ok, nx, nr end
  if nr == nil then
    local _, z = step(p, s, 0, now)
    nr = z
  end
  return false, nx, { blocked = true, s = nr, u = now + b }
end

-- Expiry on a grid of whole slacks (see above): a state meaningful until endMs (absolute, on the
-- clock of now) is covered once the key lives until (second(endMs) + 2) * TTL_SLACK_MS, more than
-- endMs + TTL_SLACK_MS. second() is the grid index, compared to tell whether a write needs more.
local function second(endMs)
  return (endMs - endMs % TTL_SLACK_MS) / TTL_SLACK_MS
end

-- Raises the key's TTL to cover a state meaningful until endMs, with headroom, when it is below that.
local function extend(key, endMs, now)
  local needed = ceil((second(endMs) + 2) * TTL_SLACK_MS - now)
  if needed < 1 then needed = 1 end
  -- Headroom of two grid seconds at least: a state whose end moves into the next second is
  -- still covered, so a busy key pays a PTTL, not a PEXPIRE too, on each of them.
  if call('PTTL', key) < needed then call('PEXPIRE', key, needed + max(2 * TTL_SLACK_MS, floor(needed / 8))) end
end

-- Fast paths: consume of one limit without a block (limits.fast, set by parseLimits). Each is
-- the general path (stepBlocked, encode, ttlOf, the expiry rule) written out for one algorithm,
-- with the same arithmetic in the same order: fewer function calls, tables and conversions.
-- Given the field's text r (nil: absent), it writes what the general path would and returns the
-- verdict ('1' or '0'), or nil when r is not that algorithm's plain state (e.g. a block stored
-- before the limit's block was removed): the general path decides then. ttlFree: on the server
-- clock with pinned parameters, where a write that does not outlive the state it replaces keeps
-- the TTL.

FAST['gcra'] = function(key, f, p, r, c, now, ttlFree)
  local tat, old = now, nil
  if r then
    old = tonumber(r)
    if old == nil then return nil end
    if old > now then tat = old end
  end
  local T = p[2]
  local newTat = tat + c * T
  local ahead = newTat - now
  local backlog = ahead
  if backlog < 0 then backlog = 0 end
  local magnitude = newTat
  if magnitude < 0 then magnitude = -magnitude end
  if not (ahead <= p[3] + (1e-9 * T + (backlog / T + 1) * magnitude * 2.220446049250313e-16)) then return '0' end
  local encoded = fmt(newTat)
  if encoded ~= r then
    call('HSET', key, f, encoded)
    if not ttlFree or old == nil or second(newTat) > second(old) then extend(key, newTat, now) end
  end
  return '1'
end

FAST['fixed-window'] = function(key, f, p, r, c, now, ttlFree)
  local W = p[3]
  local startMs, used, startText, oldEnd = now, 0, nil, nil
  if r then
    local x, y = match(r, '^([^,]+),([^,]+)$')
    if x == nil then return nil end
    local stored = x + 0
    oldEnd = stored + W
    if now < stored + W then startMs = stored; used = y + 0; startText = x end
  end
  if not (c <= p[2] - used + 1e-9) then return '0' end
  -- A start read back is written back as read: fmt(x + 0) is x for every text fmt wrote.
  local n = used + c
  local encoded
  -- One string.format for a whole count (the usual case): cheaper than several.
  if n == floor(n) and n > -1e15 and n < 1e15 then
    if startText then encoded = format('%s,%d', startText, n) else encoded = format('%d,%d', startMs, n) end
  else
    encoded = (startText or fmt(startMs)) .. ',' .. fmt(n)
  end
  if encoded ~= r then
    call('HSET', key, f, encoded)
    if not ttlFree or oldEnd == nil or second(startMs + W) > second(oldEnd) then extend(key, startMs + W, now) end
  end
  return '1'
end

FAST['sliding-window'] = function(key, f, p, r, c, now, ttlFree)
  local W = p[3]
  local startMs = floor(now / W) * W
  local previous, current, oldEnd = 0, 0, nil
  if r then
    local x, y, z = match(r, '^([^,]+),([^,]+),([^,]+)$')
    if x == nil then return nil end
    local stored = x + 0
    oldEnd = stored + 2 * W
    if stored == startMs then previous = y + 0; current = z + 0
    elseif stored == startMs - W then previous = z + 0 end
  end
  local estimate = (previous * (W - (now - startMs))) / W + current
  if not (estimate + c <= p[2] + 1e-9) then return '0' end
  local n = current + c
  local encoded
  -- One string.format for whole counts (the usual case; startMs is whole): cheaper than several.
  if n == floor(n) and previous == floor(previous) and n > -1e15 and n < 1e15 and previous > -1e15 and previous < 1e15 and startMs > -1e15 and startMs < 1e15 then
    encoded = format('%d,%d,%d', startMs, previous, n)
  else
    encoded = fmt(startMs) .. ',' .. fmt(previous) .. ',' .. fmt(n)
  end
  if encoded ~= r then
    call('HSET', key, f, encoded)
    if not ttlFree or oldEnd == nil or second(startMs + 2 * W) > second(oldEnd) then extend(key, startMs + 2 * W, now) end
  end
  return '1'
end

-- Continuous refill only (interval refill takes the general path).
FAST['token-bucket'] = function(key, f, p, r, c, now, ttlFree)
  local burst, T = p[2], p[3]
  local tokens, atMs, oldTtl = burst, now, nil
  if r then
    local x, y = match(r, '^([^,]+),([^,]+)$')
    if x == nil then return nil end
    local at = y + 0
    local elapsed = now - at
    if elapsed < 0 then elapsed = 0 end
    tokens = x + elapsed / T
    if not (tokens < burst) then tokens = burst end
    atMs = at
    if now > at then atMs = now end
    -- ttl() of the state read: tbRefill gives the same level and time.
    local missing = burst - tokens
    if missing <= 1e-9 then oldTtl = 0 else oldTtl = missing * T end
  end
  if not (c <= tokens + 1e-9) then return '0' end
  local left = tokens - c
  local encoded = fmt(left) .. ',' .. fmt(atMs)
  if encoded ~= r then
    call('HSET', key, f, encoded)
    -- ttl() of the state written: its time is not before now, so tbRefill adds nothing.
    local level = left + 0 / T
    if not (level < burst) then level = burst end
    local missing = burst - level
    local t = 0
    if missing > 1e-9 then t = missing * T end
    if not ttlFree or oldTtl == nil or second(now + t) > second(now + oldTtl) then extend(key, now + t, now) end
  end
  return '1'
end

-- Redis TIME, { seconds, microseconds } as text, in ms: seconds * 1000 + floor(us / 1000). A text
-- to number conversion costs about as much as a redis.call: the seconds' text changes once a
-- second, so its conversion is kept; us is converted once. floor without a call: us is a whole
-- number below 1e6, so (us - us % 1000) / 1000 is exact.
local lastSeconds, lastSecondsMs = nil, 0
local function clock(time)
  local seconds = time[1]
  if seconds ~= lastSeconds then lastSeconds, lastSecondsMs = seconds, seconds * 1000 end
  local us = time[2] + 0
  return lastSecondsMs + (us - us % 1000) / 1000
end

-- The expiry layout ('~' ids, see above): one GCRA or fixed-window limit, in a string key of its
-- own whose expiry is the state's end, so the server clock decides without TIME. The script
-- works at now = 0: a time is ms after the server's now, read from PTTL. Each returns the reply
-- '= <verdict> <state read>'. step and refund are the general ones, run at now = 0, so the
-- store's evaluatePolicy at now = 0 computes the very same numbers.

-- GCRA: the TAT is the key's PTTL (whole ms; the store only sends limits whose T and tau are whole
-- ms); the value is unused. A TAT at or before now is no key: the key has expired.

-- Stores a TAT, tat ms after now (> 0), as its key's expiry. PX takes whole ms: a fractional cost's
-- TAT is kept from the next whole ms, never earlier. A key that exists only has its expiry moved
-- (PEXPIRE: SET also replaces the value).
local function tatWrite(key, tat, existed)
  if existed then call('PEXPIRE', key, fmt(ceil(tat))) else call('SET', key, '1', 'PX', fmt(ceil(tat))) end
end

local function gcraByExpiry(key, p, mode, c)
  local t = call('PTTL', key)
  local s = nil
  if t >= 0 then s = t end
  local verdict = '-'
  if mode == 'consume' then
    local ok, newTat = step(p, s, c, 0)
    if ok then
      verdict = '1'
      if newTat > 0 and newTat ~= s then tatWrite(key, newTat, s ~= nil) end
    else
      verdict = '0'
    end
  elseif mode == 'refund' and s ~= nil then
    local w = refund(p, s, c, 0)
    if w == nil then call('DEL', key) elseif w ~= s then tatWrite(key, w, true) end
  end
  -- One string.format: one string made (PTTL is a whole number of ms).
  if s == nil then return '= ' .. verdict .. ' -' end
  return format('= %s %d', verdict, t)
end

${WINDOW_INCREMENT}
-- A request on a fixed window that windowIncrement does not take (fractional costs or counts,
-- peek, refund): reads the value and the TTL, then writes what changed.
local function windowReadWrite(key, p, mode, c)
  local W = p[3]
  local v = call('GET', key)
  local t = call('PTTL', key)
  local used = nil
  if v then used = tonumber(v) end
  local s, text = nil, '-'
  if used ~= nil and t > 0 then s, text = { t - W, used }, fmt(t - W) .. ',' .. fmt(used) end
  local verdict = '-'
  if mode == 'consume' then
    local ok, nx = step(p, s, c, 0)
    if ok then
      verdict = '1'
      if s == nil then call('SET', key, fmt(nx[2]), 'PX', fmt(W)) elseif nx[2] ~= used then call('SET', key, fmt(nx[2]), 'PX', t) end
    else
      verdict = '0'
    end
  elseif mode == 'refund' and s ~= nil then
    local w = refund(p, s, c, 0)
    if w[2] ~= used then call('SET', key, fmt(w[2]), 'PX', t) end
  end
  return '= ' .. verdict .. ' ' .. text
end

-- Any request on a fixed window: windowIncrement when it can, else windowReadWrite.
local function windowByExpiry(key, p, mode, c)
  if mode == 'consume' and c >= 1 and c == floor(c) and c < 1e15 then
    local reply = windowIncrement(key, p[2], p[3], c)
    if reply ~= nil then return reply end
  end
  return windowReadWrite(key, p, mode, c)
end

local function byExpiry(key, limits, mode, c)
  local p = limits.P[1]
  if p[1] == 'gcra' then return gcraByExpiry(key, p, mode, c) end
  return windowByExpiry(key, p, mode, c)
end

-- consume 1 of a one-limit policy in the expiry layout, kept with its parsed limits (parseLimits).
EXPIRY_CONSUME_ONE = function(p)
  if p[1] == 'gcra' then return function(key) return gcraByExpiry(key, p, 'consume', 1) end end
  local limit, W = p[2], p[3]
  return function(key) return windowIncrement(key, limit, W, 1) or windowReadWrite(key, p, 'consume', 1) end
end

-- A limit of a policy of several, kept in the expiry layout: its state at now (on the TIME clock of
-- the others), as the text its hash field would hold, or nil. Reading adds the key's PTTL, kept on
-- the script's start time, to TIME's now: within a millisecond of each other.
local function expiryRead(p, key, now)
  local t = call('PTTL', key)
  if p[1] == 'gcra' then
    if t < 0 then return nil end
    return fmt(now + t)
  end
  if t <= 0 then return nil end
  local v = call('GET', key)
  if v == nil or tonumber(v) == nil then return nil end
  return fmt(now + t - p[3]) .. ',' .. v
end

-- Writes w, a limit's state at now as the general path computes it, to its key in the expiry
-- layout (gone(w): deleted), the key expiring when the state ends; s is the state it replaces.
-- The cheapest command that does it: tatWrite for GCRA, INCRBY for a count that stays whole in the
-- same window (its key keeps its expiry); else SET with PX.
local function expiryWrite(p, key, w, s, now)
  local endMs
  if gone(w) then endMs = 0 elseif p[1] == 'gcra' then endMs = w - now else endMs = w[1] + p[3] - now end
  if endMs <= 0 then
    call('DEL', key)
  elseif p[1] == 'gcra' then
    tatWrite(key, endMs, s ~= nil)
  elseif s ~= nil and s[1] == w[1] and w[2] == floor(w[2]) and s[2] == floor(s[2]) and w[2] < 1e15 then
    call('INCRBY', key, fmt(w[2] - s[2]))
  else
    call('SET', key, fmt(w[2]), 'PX', fmt(ceil(endMs)))
  end
end

-- One decision on keys (see above) with the argument spec; returns the reply.
local function decide(keys, spec)
  if call == nil then init() end
  local key = keys[1]
  -- The request. Its usual form, consume 1 on the server clock, is found whole in the cache;
  -- other forms by the text after their head (the limits), which does not hold the clock.
  local mode, cost, nowArg
  local limits = cache[spec]
  if limits ~= nil then
    -- consume 1 of one limit in the expiry layout.
    local expiryOne = limits.expiryOne
    if expiryOne ~= nil then return expiryOne(key) end
    -- consume 1 on the server clock; one limit without a block goes straight to its fast path.
    local fast = limits.fast
    if fast ~= nil then
      local time = call('TIME')
      local now = clock(time)
      local f = limits.f1
      local r = call('HGET', key, f)
      local verdict = fast(key, f, limits.p1, r, 1, now, limits.pinned)
      if verdict ~= nil then return time[1] .. '/' .. time[2] .. ' ' .. verdict .. ' ' .. (r or '-') end
      -- Not its plain state (a block stored before the limit's block was removed): the general
      -- path decides, on a clock reading of its own.
    end
    mode, cost, nowArg = 'consume', 1, '-'
  elseif sub(spec, 1, 12) == 'consume 1 - ' then
    mode, cost, nowArg = 'consume', 1, '-'
    limits = remember(spec, parseLimits(spec, 12))
    if limits.expiryOne ~= nil then return limits.expiryOne(key) end
  else
    local costText, pos
    mode, costText, nowArg, pos = match(spec, '^(%a+) (%S+) (%S+)()')
    cost = tonumber(costText)
    local tail = sub(spec, pos)
    limits = cache[tail]
    if limits == nil then
      limits = remember(tail, parseLimits(spec, pos))
    end
  end
  -- '+': the server clock, and a policy all in the expiry layout replies TIME too.
  local serverClock = nowArg == '-' or nowArg == '+'
  local expiry = limits.expiry
  -- The expiry layout follows the server's clock only.
  if limits.expiryCount > 0 and not serverClock then error('ratekit: the expiry layout needs the server clock') end
  local now, nowText
  if serverClock and limits.expiryCount == limits.count then
    -- Every limit in the expiry layout: decided at now = 0 without TIME ('=').
    now, nowText = 0, '='
    if nowArg == '+' then
      local time = call('TIME')
      nowText = '=' .. time[1] .. '/' .. time[2]
    end
    -- One limit: its own functions, whose reply starts with '='.
    if limits.count == 1 then return nowText .. sub(byExpiry(key, limits, mode, cost), 2) end
  elseif serverClock then
    local time = call('TIME')
    now = clock(time)
    -- The reading as Redis gave it (the store computes the same ms): cheaper than formatting now.
    nowText = time[1] .. '/' .. time[2]
  else
    nowText = nowArg
    now = tonumber(nowArg)
  end
  local P, field, count = limits.P, limits.field, limits.count

  if count == 1 then
    local p, f = P[1], field[1]
    local r = call('HGET', key, f)
    if limits.fast ~= nil and mode == 'consume' then
      local verdict = limits.fast(key, f, p, r, cost, now, serverClock and limits.pinned)
      if verdict ~= nil then return nowText .. ' ' .. verdict .. ' ' .. (r or '-') end
    end
    local verdict = '-'
    if mode ~= 'peek' then
      local s, u = readState(p, r)
      local w
      if mode == 'refund' then
        w = refundBlocked(p, s, u, cost, now) or false
      else
        local ok, nx, nr = stepBlocked(p, s, u, limits.block[1], cost, now)
        if ok then verdict = '1'; w = nx else verdict = '0'; w = nr end
      end
      if gone(w) then
        if r then call('HDEL', key, f) end
      elseif w ~= nil then
        local encoded = encode(w)
        if encoded ~= r then
          call('HSET', key, f, encoded)
          local endMs = now + ttlOf(p, w, now)
          if not (serverClock and limits.pinned) or s == nil or second(endMs) > second(now + ttlOf(p, s, now, u)) then extend(key, endMs, now) end
        end
      end
    end
    return nowText .. ' ' .. verdict .. ' ' .. (r or '-')
  end

  -- The hash's fields with one HMGET; the states in the expiry layout from their keys.
  local raw
  if limits.expiryCount == 0 then
    raw = call('HMGET', key, unpack(field))
  else
    raw = {}
    local hashed = limits.hashed
    local got = nil
    if #hashed > 0 then got = call('HMGET', key, unpack(hashed)) end
    local j = 0
    for i = 1, count do
      if expiry[i] then
        raw[i] = expiryRead(P[i], keys[expiry[i]], now)
      else
        j = j + 1
        raw[i] = got[j] or nil
      end
    end
  end
  local verdict = '-'
  if mode ~= 'peek' then
    local states, blocks = {}, {}
    for i = 1, count do states[i], blocks[i] = readState(P[i], raw[i]) end
    local writes = {}
    if mode == 'refund' then
      for i = 1, count do writes[i] = refundBlocked(P[i], states[i], blocks[i], cost, now) or false end
    else
      -- Only a limit that itself refused may record a penalty or a block; the others were never charged.
      local refused = nil
      for i = 1, count do
        local ok, nx, nr = stepBlocked(P[i], states[i], blocks[i], limits.block[i], cost, now)
        if ok then writes[i] = nx else refused = refused or {}; refused[i] = nr end
      end
      if refused == nil then verdict = '1' else verdict = '0'; writes = refused end
    end
    local sets, nsets, dels = nil, 0, nil
    local longest = nil
    local mayExtend = not (serverClock and limits.pinned)
    for i = 1, count do
      local w = writes[i]
      if expiry[i] then
        if w ~= nil and (raw[i] or not gone(w)) and (gone(w) or encode(w) ~= raw[i]) then expiryWrite(P[i], keys[expiry[i]], w, states[i], now) end
      elseif gone(w) then
        if raw[i] then
          dels = dels or {}
          dels[#dels + 1] = field[i]
        end
      elseif w ~= nil then
        local encoded = encode(w)
        if encoded ~= raw[i] then
          sets = sets or {}
          sets[nsets + 1] = field[i]
          sets[nsets + 2] = encoded
          nsets = nsets + 2
          local t = ttlOf(P[i], w, now)
          if longest == nil or t > longest then longest = t end
          if not mayExtend and (states[i] == nil or second(now + t) > second(now + ttlOf(P[i], states[i], now, blocks[i]))) then mayExtend = true end
        end
      end
    end
    if dels then call('HDEL', key, unpack(dels)) end
    if nsets > 0 then
      call('HSET', key, unpack(sets))
      if mayExtend then extend(key, now + longest, now) end
    end
  end
  local parts = { nowText, verdict }
  for i = 1, count do parts[i + 2] = raw[i] or '-' end
  return concat(parts, ' ')
end

-- Several decisions in one call (the store's coalescing), decided in order, each as decide()
-- decides it alone. ARGV[1] is empty when every decision has one key (KEYS[i] is decision i's),
-- else the key count of each decision, space-separated, their keys following each other in KEYS;
-- ARGV[1 + i] is decision i's argument, or empty: the same as the decision before it (a turn's
-- decisions mostly share one, which is then read once). Replies with an array: decision i's reply, or '!' and
-- the error that failed it alone (the others are decided all the same). Like a lone call, a
-- decision that fails after a write keeps that write: Redis does not roll a script back.
local function decideMany(keys, args)
  if call == nil then init() end
  local replies, n = {}, #args - 1
  local one = {}
  local counts = args[1]
  local each = nil
  if counts ~= '' then each = gmatch(counts, '%d+') end
  local k = 1
  local spec = ''
  for i = 1, n do
    local ks
    local given = args[i + 1]
    if given ~= '' then spec = given end
    local c = 1
    if each ~= nil then c = tonumber(each()) end
    if c == 1 then
      one[1] = keys[k]
      ks = one
    else
      ks = {}
      for j = 1, c do ks[j] = keys[k + j - 1] end
    end
    k = k + c
    local ok, reply = protect(decide, ks, spec)
    if ok then
      replies[i] = reply
    else
      if type(reply) == 'table' then reply = reply.err or reply.message end
      replies[i] = '!' .. tostring(reply)
    end
  end
  return replies
end
`;

/** How long, in ms, a key outlives its longest-lived state: callers whose clocks lag the writer's (caller-clock mode) still find it. */
export const TTL_SLACK_MS = 1_000;

/**
 * The script form's fast path. A script runs all of its text on every call: what the function
 * library defines once, when it is loaded, {@link DECISION_SCRIPT} defines on every EVALSHA, about
 * 100,000 Redis instructions before any decision (bench/icount/redis.mjs: 129,000 inside the script
 * for a fixed window, against 28,800 for the function). Its most common request, consume 1 on the
 * server clock of a fixed window alone in the expiry layout, is decided first, with nothing but
 * the helpers it needs: the same `windowIncrement` as the function's. Anything else (another
 * algorithm, a block, several limits, a fractional count in the key) runs the whole code.
 */
const SCRIPT_FAST_PATH = String.raw`
do
  local floor, format, call, pcall, type = math.floor, string.format, redis.call, redis.pcall, type
  ${FMT}
  ${WINDOW_INCREMENT}
  local spec = ARGV[1]
  -- One limit: its id, n bytes after the separator, ends the argument. (Plain string.find and
  -- string.sub to read it counted more than this one match.)
  local limit, W, n, at = string.match(spec, '^consume 1 %- fixed%-window (%d+) (%d+) (%d+)~()')
  if limit ~= nil and at + n == #spec + 1 then
    local reply = windowIncrement(KEYS[1], tonumber(limit), tonumber(W), 1)
    if reply ~= nil then return reply end
  end
end
`;

/**
 * The decision script, for EVAL and EVALSHA: its fast path ({@link SCRIPT_FAST_PATH}), then
 * {@link DECISION_CODE} run on `KEYS` and `ARGV[1]`.
 */
export const DECISION_SCRIPT = `${SCRIPT_FAST_PATH}\n${DECISION_CODE}\nreturn decide(KEYS, ARGV[1])\n`;

/**
 * The batch script, for EVAL and EVALSHA: {@link DECISION_CODE}'s `decideMany`, several
 * decisions in one call (the store's coalescing; see {@link DECISION_BATCH_FUNCTION} for its
 * keys, arguments and reply). The per-call definitions of the script form are paid once per batch.
 */
export const DECISION_BATCH_SCRIPT = `${DECISION_CODE}\nreturn decideMany(KEYS, ARGV)\n`;
