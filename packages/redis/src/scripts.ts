import { createHash } from 'node:crypto';

/**
 * The decision script: one whole decision (every limit of a policy, all or
 * nothing) in one atomic call. It ports the verdict and the state changes of
 * @ratekit/core's `algorithms/*.ts` (`step` → allowed, next, nextIfRefused;
 * `refund`; `ttlMs`) and `policy.ts`; the differential tests hold it to them.
 * It replies with the states it read, and the store builds the decision
 * from them with core's own `evaluatePolicy`, so every reported number comes
 * from the same code as the in-memory store's (see `store.ts`).
 *
 * KEYS
 *   KEYS[1]  the hash of one (namespace, key): `<prefix>{<namespace length>:<namespace>:<key>}`,
 *            one field per limit id, each holding that limit's state as
 *            comma-separated numbers (the `LimitState` array).
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
 *            server clock (`TIME`, truncated to the millisecond)
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
 *            state; length-prefixed, since a limit's name may hold spaces.
 *
 *   For example `consume 1 - gcra 100 1000 20:gcra:1000:100000:10:…`.
 *
 * Reply: one bulk string (it parses faster than an array), space-separated:
 *   now  verdict  state₁ … stateₙ
 * `now` is the clock reading used (the caller's `now` itself in caller-clock
 * mode); `verdict` is `1` (admitted) or `0` (refused) for consume and `-`
 * for peek and refund, which always answer; each state is the field as read
 * before any write, `-` when absent. States are stored with 17 significant
 * digits, so every double comes back exactly (Lua would truncate numbers
 * returned as numbers).
 *
 * Writes (consume and refund): the fields whose state changed, in one HSET
 * (HDEL for a state that is gone). Expiry keeps this invariant: the key
 * lives at least {@link TTL_SLACK_MS} past the moment each stored state
 * becomes as good as none (`ttlMs`). On the server clock, when every id
 * pins its limit's parameters, a write whose states stay meaningful no
 * longer than the ones they replace (a window counter within its window, a
 * refund) keeps it without touching the TTL. Otherwise (and always on the
 * caller's clock, which the key's TTL does not follow, and for named
 * limits) the TTL is read and, if it is below the longest `ttlMs` written
 * plus the slack, raised to that plus headroom (an eighth, at least
 * {@link TTL_SLACK_MS} more), so a busy key is not re-expired on every
 * request. TTLs are never lowered. Peek writes nothing.
 *
 * Cost: O(number of limits) and 3–5 Redis calls (TIME, HGET/HMGET, HSET,
 * PTTL when the TTL may need raising, sometimes PEXPIRE), except the
 * sliding log, which is O(entries ≤ limit). Needs Redis ≥ 5 (TIME before
 * writes relies on effects replication).
 */
export const DECISION_SCRIPT = String.raw`
-- Redis runs the whole chunk on every call, so everything here costs every
-- decision. Dearest are redis.call, string.format and closures (a closure
-- costs about 25 ns per local it captures): the functions below take the
-- clock as an argument and capture little, and the consume path builds no
-- closure beyond them.
local TTL_SLACK_MS = 1000
local floor, ceil, max, min, abs = math.floor, math.ceil, math.max, math.min, math.abs
local tonumber, format, match, sub = tonumber, string.format, string.match, string.sub

-- The request. Its usual head, consume 1 on the server clock, is compared whole (cheaper than a match).
local key = KEYS[1]
local spec = ARGV[1]
local mode, cost, nowArg, pos
if sub(spec, 1, 11) == 'consume 1 -' then
  mode, cost, nowArg, pos = 'consume', 1, '-', 12
else
  local costText
  mode, costText, nowArg, pos = match(spec, '^(%a+) (%S+) (%S+)()')
  cost = tonumber(costText)
end
local serverClock = nowArg == '-'
local now, nowText
if serverClock then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + floor(tonumber(time[2]) / 1000)
  nowText = format('%d', now)
else
  nowText = nowArg
  now = tonumber(nowArg)
end

-- The limits. P[i]: the algorithm, then its parameters as numbers:
-- gcra, delay: T, tau (delay: maxDelayMs, refusedPenaltyCapMs or nil);
-- token-bucket: burst, T, limit, windowMs, interval refill?; windows: limit, windowMs.
local field, P, count = {}, {}, 0
local hasTokenBucket = false
-- Whether every limit's id pins its parameters (see below: the TTL rule relies on it).
local pinned = true
local specLength = #spec
while pos <= specLength do
  -- Two parameters (GCRA and the windows) in one match; the others have more.
  local algorithm, a, b, n, sep, at = match(spec, '^ (%S+) (%S+) (%S+) (%d+)([:=])()', pos)
  local p
  if algorithm == 'gcra' or algorithm == 'fixed-window' or algorithm == 'sliding-window' or algorithm == 'sliding-log' then
    p = { algorithm, tonumber(a), tonumber(b) }
  else
    local c, d, e
    algorithm, at = match(spec, '^ (%S+)()', pos)
    if algorithm == 'token-bucket' then
      a, b, c, d, e, n, sep, at = match(spec, '^ (%S+) (%S+) (%S+) (%S+) (%a+) (%d+)([:=])()', at)
      p = { algorithm, tonumber(a), tonumber(b), tonumber(c), tonumber(d), e == 'interval' }
      hasTokenBucket = true
    elseif algorithm == 'delay' then
      a, b, c, d, n, sep, at = match(spec, '^ (%S+) (%S+) (%S+) (%S+) (%d+)([:=])()', at)
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
  pos = at + n
end

-- Read every limit's state at once.
local raw
if count == 1 then raw = { redis.call('HGET', key, field[1]) } else raw = redis.call('HMGET', key, unpack(field)) end

local verdict = '-'
if mode ~= 'peek' then
  -- States: a number for GCRA and delay ([tatMs]), else a table of numbers; nil when absent.
  local states = {}
  for i = 1, count do
    local r = raw[i]
    if r then
      local algorithm = P[i][1]
      if algorithm == 'gcra' or algorithm == 'delay' then
        states[i] = tonumber(r)
      elseif algorithm == 'sliding-window' then
        local x, y, z = match(r, '^([^,]+),([^,]+),([^,]+)$')
        states[i] = { tonumber(x), tonumber(y), tonumber(z) }
      elseif algorithm == 'sliding-log' then
        local s = {}
        for part in string.gmatch(r, '[^,]+') do s[#s + 1] = tonumber(part) end
        states[i] = s
      else
        local x, y = match(r, '^([^,]+),([^,]+)$')
        states[i] = { tonumber(x), tonumber(y) }
      end
    end
  end

  -- token-bucket.ts: the level at now and the refill timestamp to store.
  local tbRefill = nil
  if hasTokenBucket then
    tbRefill = function(p, s, now)
      if s == nil then return p[2], now end
      local tokens, atMs = s[1], s[2]
      local elapsed = max(0, now - atMs)
      if not p[6] then return min(p[2], tokens + elapsed / p[3]), max(atMs, now) end
      local intervals = floor(elapsed / p[5])
      if intervals == 0 then return tokens, atMs end
      return min(p[2], tokens + intervals * p[4]), atMs + intervals * p[5]
    end
  end

  -- Algorithm.step, the verdict and the states only: allowed, next, nextIfRefused.
  -- EPSILON = 1e-9 and 2^-52 (DBL_EPSILON) are written out: no upvalues.
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
      -- sliding-log.ts: the entries that arrived after now - windowMs, then one more.
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
    -- token-bucket
    local tokens, atMs = tbRefill(p, s, now)
    return c <= tokens + 1e-9, { tokens - c, atMs }, nil
  end

  -- Algorithm.ttlMs: ms after now at which s is as good as no state.
  local function ttl(p, s, now)
    local algorithm = p[1]
    if algorithm == 'gcra' or algorithm == 'delay' then return s - now end
    if algorithm == 'fixed-window' then return s[1] + p[3] - now end
    if algorithm == 'sliding-window' then return s[1] + 2 * p[3] - now end
    if algorithm == 'sliding-log' then return s[#s - 1] + p[3] - now end
    -- token-bucket: time until full (timeToTokens of the missing tokens).
    local tokens, atMs = tbRefill(p, s, now)
    local missing = p[2] - tokens
    if missing <= 1e-9 then return 0 end
    if not p[6] then return missing * p[3] end
    return atMs + math.ceil(missing / p[4] - 1e-9) * p[5] - now
  end

  -- policy.ts, all or nothing. writes[i]: a state to store, false to delete, nil to leave alone.
  local writes = {}
  if mode == 'refund' then
    -- Algorithm.refund: the state after giving c back (nil: no state).
    local function refund(p, s, c)
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
        -- Give back the newest units first: they would have expired last.
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
    for i = 1, count do writes[i] = refund(P[i], states[i], cost) or false end
  elseif count == 1 then
    local ok, nx, nr = step(P[1], states[1], cost, now)
    if ok then verdict = '1'; writes[1] = nx else verdict = '0'; writes[1] = nr end
  else
    local allowed = true
    local ok, nx, nr = {}, {}, {}
    for i = 1, count do
      ok[i], nx[i], nr[i] = step(P[i], states[i], cost, now)
      if not ok[i] then allowed = false end
    end
    if allowed then
      verdict = '1'
      writes = nx
    else
      verdict = '0'
      -- Only a limit that itself refused may record a penalty; the others were never charged.
      for i = 1, count do
        if not ok[i] then writes[i] = nr[i] end
      end
    end
  end

  -- Numbers in full: integers as such, other doubles with 17 significant digits.
  local function fmt(x)
    if x == floor(x) and x > -1e15 and x < 1e15 then return format('%d', x) end
    return format('%.17g', x)
  end

  -- Write what changed; keep the key alive for the longest-lived state written.
  -- sets/dels: field, value, field, value… and fields to delete; made only when needed.
  local sets, nsets, dels = nil, 0, nil
  local longest = nil
  -- Whether the TTL may need raising: always on the caller's clock, and for a policy with a
  -- named limit (the same field may have been written with other parameters, e.g. a shorter
  -- window); otherwise when a state is new or outlives the one it replaces (else the key
  -- already outlives it: see the invariant above).
  local mayExtend = not (serverClock and pinned)
  for i = 1, count do
    local w = writes[i]
    local isTable = type(w) == 'table'
    if w == false or (isTable and #w == 0) then
      if raw[i] then
        dels = dels or {}
        dels[#dels + 1] = field[i]
      end
    elseif w ~= nil then
      local encoded
      if isTable then
        encoded = fmt(w[1])
        for j = 2, #w do encoded = encoded .. ',' .. fmt(w[j]) end
      else
        encoded = fmt(w)
      end
      if encoded ~= raw[i] then
        sets = sets or {}
        sets[nsets + 1] = field[i]
        sets[nsets + 2] = encoded
        nsets = nsets + 2
        local t = ttl(P[i], w, now)
        if longest == nil or t > longest then longest = t end
        if not mayExtend and (states[i] == nil or t > ttl(P[i], states[i], now)) then mayExtend = true end
      end
    end
  end
  if dels then redis.call('HDEL', key, unpack(dels)) end
  if nsets > 0 then
    if nsets == 2 then redis.call('HSET', key, sets[1], sets[2]) else redis.call('HSET', key, unpack(sets)) end
    if mayExtend then
      local needed = ceil(longest) + TTL_SLACK_MS
      if needed < 1 then needed = 1 end
      if redis.call('PTTL', key) < needed then redis.call('PEXPIRE', key, needed + max(TTL_SLACK_MS, floor(needed / 8))) end
    end
  end
end

-- The reply: the clock, the verdict, and the states as read.
if count == 1 then return nowText .. ' ' .. verdict .. ' ' .. (raw[1] or '-') end
local parts = { nowText, verdict }
for i = 1, count do parts[i + 2] = raw[i] or '-' end
return table.concat(parts, ' ')
`;

/** How long, in ms, a key outlives its longest-lived state: callers whose clocks lag the writer's (caller-clock mode) still find it. */
export const TTL_SLACK_MS = 1_000;

/** SHA-1 of {@link DECISION_SCRIPT}, for EVALSHA. */
export const DECISION_SCRIPT_SHA = createHash('sha1').update(DECISION_SCRIPT).digest('hex');
