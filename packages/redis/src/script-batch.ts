/**
 * Coalescing for any package's own Lua: the script calls asked in one
 * iteration of the event loop go to Redis as one call of a batch script, as
 * this package's store coalesces its decisions (core's `turnCoalescer`
 * schedules both).
 *
 * The rule, and why it never changes a reply: the batch script holds each
 * script's text, unchanged, as the body of a Lua function whose parameters
 * are named `KEYS` and `ARGV`, and runs the calls of the batch one after the
 * other, in the order they were asked. Redis runs a script without
 * interruption, so every call reads what the calls before it left, exactly
 * as when each is sent alone on one connection (which also keeps them in
 * order). A lone call (the first of an iteration, or coalescing off) goes as
 * a batch of one, so every call to a node uses the one batch script: a node
 * that lacks it (NOSCRIPT) lacks it for every call sent to it in a row, and
 * their EVALs go in the order the calls were sent. A call that fails inside
 * a batch (a key of another type, `redis.error_reply`) fails alone, as it
 * would alone; a batch that fails (a closed connection) fails each call.
 *
 * On a cluster a batch holds the calls of one hash slot (the slot of each
 * call's first key; a call's own keys share a slot, as they must alone).
 *
 * @module
 */
import { type CoalescingOptions, DEFAULT_BATCHES_IN_FLIGHT, resolveCoalescing, turnCoalescer } from '@ratekit/core';
import type { RedisScriptTransport } from './transport.js';

/** Sends calls of a fixed set of scripts, coalesced per iteration (see the module's rule). */
export interface ScriptBatcher {
  /**
   * Runs `script` (one of the scripts the batcher was built with) over
   * `keys` and `args`. Resolves with the script's reply as the client
   * decodes it (`null` for a Lua `nil` or `false`), or rejects with the
   * script's error (an `Error` with its message) or the call's.
   *
   * @throws {TypeError} (synchronously) when `script` is not one of the batcher's
   */
  run(script: string, keys: readonly string[], args: readonly string[]): Promise<unknown>;
  /** Sends the calls waiting for their iteration's batch now (before the application closes the client). */
  flush(): void;
}

/** A call waiting for its batch. */
interface Waiting {
  readonly script: number;
  readonly keys: readonly string[];
  readonly args: readonly string[];
  readonly resolve: (reply: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * The batch script over `scripts`. ARGV[1] describes the calls: `=s k a p…`
 * when every call runs script `s` (its position, from 1) with `k` keys (at
 * least one) and `a` arguments, the positions `p…` (from 1, increasing) naming the
 * arguments equal in every call, which follow once, from ARGV[2]; else each
 * call's three numbers in turn (`s k a s k a …`). The calls' keys follow in
 * KEYS, their (other) arguments in ARGV. A limiter's calls share most of
 * theirs (the limit, the window): sent once, they cost neither the client's
 * encoding nor Redis's parsing per call.
 *
 * It replies with one flat array, each call's entry in turn: `0, message`
 * when the call failed; `1, reply` for a reply that is not an array (`false`
 * for a nil); `2 + n` and the n elements for an array reply (an element may
 * itself be an array). Flat, because Redis pays for every nested array it
 * writes, and a reply of two levels per call cost more than the call's own
 * commands.
 *
 * The scripts' `tonumber` is a memo, fresh for each batch: the calls of one
 * batch convert the same limit and window strings again and again, and
 * Redis 7.0's Lua parses each twice (`strtod`). It answers exactly as
 * `tonumber`, but for a call with no argument at all, which Lua refuses and
 * the memo answers with nil.
 *
 * @throws {TypeError} when a script starts with a shebang line (`#!lua …`): its flags would apply to the whole batch
 */
export function batchScript(scripts: readonly string[]): string {
  // `tonumber` answers from a memo, fresh per batch (see above), which holds strings only and is looked up first: a hit
  // costs no call of `type`. A base, or a value not a string, goes to the real one.
  // A script's function is made when a batch first calls it (`make`): making every script's would cost each batch
  // the functions it never calls. The globals the scripts use most are upvalues: a global is a table lookup each time.
  let text = `local pcall, type, tostring, next = pcall, type, tostring, next
local redis, math, string = redis, math, string
local run, rawtonumber, numbers = {}, tonumber, {}
local function tonumber(value, base)
  local n = numbers[value]
  if n ~= nil and base == nil then return n or nil end
  if base ~= nil or type(value) ~= 'string' then return rawtonumber(value, base) end
  n = rawtonumber(value) or false
  numbers[value] = n
  return n or nil
end
local function make(s)
`;
  scripts.forEach((script, i) => {
    if (script.trimStart().startsWith('#!')) throw new TypeError(`scriptBatcher: script ${i + 1} starts with a shebang line, which cannot be batched`);
    text += `if s == ${i + 1} then return function(KEYS, ARGV)\n${script}\nend end\n`;
  });
  text += 'end\n';
  // One KEYS and one ARGV table, refilled for each call (a script sees exactly its own: what is left over, or what the
  // last call appended, is cleared).
  // ARGV[1]'s numbers are read from its bytes, 4096 at a time (under Lua's limit on the values a call returns):
  // string.gmatch and tonumber cost a batch of 16 token-bucket decisions some 25,000 Redis instructions.
  // A table reply is an array unless it carries one of the fields Redis reads as another type (error, status, RESP3).
  return `${text}local desc = ARGV[1]
local uniform = string.byte(desc, 1) == 61
local spec, count, v, digits = {}, 0, 0, false
for from = uniform and 2 or 1, #desc, 4096 do
  local bytes = {string.byte(desc, from, from + 4095)}
  for i = 1, #bytes do
    local b = bytes[i]
    if b == 32 then
      if digits then
        count = count + 1
        spec[count] = v
        v, digits = 0, false
      end
    else
      v, digits = v * 10 + b - 48, true
    end
  end
end
if digits then
  count = count + 1
  spec[count] = v
end
local out, n, keys, args, k, a = {}, 0, {}, {}, 0, 1
-- uniform: each argument's shared value (sent once after ARGV[1]), or false for the call's own (next in ARGV)
local shared, nv = {}, 0
if uniform then
  local p = 4
  for j = 1, spec[3] do
    if spec[p] == j then
      a = a + 1
      shared[j] = ARGV[a]
      p = p + 1
    else
      shared[j] = false
      nv = nv + 1
    end
  end
end
local calls = uniform and (spec[2] > 0 and #KEYS / spec[2] or (#ARGV - a) / nv) or count / 3
local s, nk, na = spec[1], spec[2], spec[3]
for i = 1, calls do
  if not uniform then
    local at = 3 * i - 2
    s, nk, na = spec[at], spec[at + 1], spec[at + 2]
  end
  for j = 1, nk do keys[j] = KEYS[k + j] end
  for j = nk + 1, #keys do keys[j] = nil end
  if uniform then
    for j = 1, na do
      local value = shared[j]
      if value then
        args[j] = value
      else
        a = a + 1
        args[j] = ARGV[a]
      end
    end
  else
    for j = 1, na do args[j] = ARGV[a + j] end
    a = a + na
  end
  for j = na + 1, #args do args[j] = nil end
  k = k + nk
  local f = run[s]
  if f == nil then
    f = make(s)
    run[s] = f
  end
  local ok, reply = pcall(f, keys, args)
  -- The entry's tag: 0 an error (its message follows), 1 one value, 2 an array (its elements follow); set here for a
  -- table, and below for anything else.
  local tag
  if type(reply) == 'table' then
    -- An array when its only keys are positive integers (one \`next\`, no field looked up), or else when it has
    -- no err, ok or RESP3 field. An err field is the error: a script's error reply (ok), or one raised (not ok).
    local len = #reply
    if ok and len > 0 and next(reply, len) == nil then
      tag = 2
    else
      local err = reply.err
      if err then
        if ok and type(err) == 'table' and err.err then err = err.err end
        tag, reply = 0, err
      elseif ok and reply.ok == nil and reply.double == nil and reply.map == nil and reply.set == nil and reply.big_number == nil and reply.verbatim_string == nil then
        tag = 2
      end
    end
  end
  -- Entries are written in order, each slot after the last: the reply stays an array (no rehash into a hash part).
  if tag == 2 then
    local at, m = n + 1, 0
    out[at] = 2
    local value = reply[1]
    while value ~= nil do
      m = m + 1
      out[at + m] = value
      value = reply[m + 1]
    end
    out[at] = 2 + m
    n = at + m
  else
    if tag == 0 or not ok then
      tag, reply = 0, tostring(reply)
    else
      tag = 1
      if reply == nil then reply = false end
    end
    out[n + 1] = tag
    out[n + 2] = reply
    n = n + 2
  end
end
return out
`;
}

/**
 * A batcher of `scripts` over `transport`: coalesced per iteration by
 * default, on the same options and defaults as `redisStore`'s (`coalesce`,
 * `maxBatchSize`, `batchesInFlight`: core's `CoalescingOptions`).
 *
 * @param transport - from {@link redisScriptTransport}
 * @param scripts - each script's text, as it would be sent alone (KEYS and ARGV, no shebang line)
 * @param options - coalescing; `{ coalesce: false }` sends each call alone (still as a batch of one)
 * @throws {RateKitOptionError} for a bad coalescing option
 * @throws {TypeError} for a script with a shebang line
 * @example
 * ```ts
 * import { redisScriptTransport, scriptBatcher } from '@ratekit/redis/transport';
 * const INCR = "local n = redis.call('INCR', KEYS[1]); redis.call('PEXPIRE', KEYS[1], ARGV[1]); return n";
 * const batcher = scriptBatcher(redisScriptTransport(client)!, [INCR]);
 * const hits = await batcher.run(INCR, ['hits:42'], ['60000']);
 * ```
 */
export function scriptBatcher(transport: RedisScriptTransport, scripts: readonly string[], options: CoalescingOptions = {}): ScriptBatcher {
  // Batches in flight overlap only when each is written at once (see redisStore).
  const { coalesce, maxBatchSize, batchesInFlight } = resolveCoalescing(options, transport.writesEachCommand ? DEFAULT_BATCHES_IN_FLIGHT : 0);
  const positions = new Map(scripts.map((script, i) => [script, i + 1]));
  const text = batchScript(scripts);
  let sha: string | undefined;
  // The SHA-1 for EVALSHA, from Web Crypto (every runtime has it; node:crypto not all): the first calls wait for it, in order.
  const shaReady = sha1Hex(text).then((hex) => {
    sha = hex;
  });
  const call = (keys: string[], args: string[]): Promise<unknown> => (sha === undefined ? shaReady.then(() => transport.run(text, sha!, keys, args)) : transport.run(text, sha, keys, args));

  const send = (batch: readonly Waiting[]): Promise<unknown> => {
    const keys: string[] = [];
    const args: string[] = [''];
    const first = batch[0]!;
    const { keys: firstKeys, args: firstArgs } = first;
    // Uniform: one script, one key count, one argument count. Then an argument equal in every call is shared (sent once).
    let uniform = true;
    const shared = firstArgs.map(() => firstKeys.length > 0);
    for (const w of batch) {
      if (w.script !== first.script || w.keys.length !== firstKeys.length || w.args.length !== firstArgs.length) {
        uniform = false;
        break;
      }
      for (let j = 0; j < shared.length; j++) if (shared[j] && w.args[j] !== firstArgs[j]) shared[j] = false;
    }
    // A call without keys nor arguments cannot be counted from KEYS or ARGV: it goes in the list form.
    if (uniform && firstKeys.length + firstArgs.length > 0) {
      let header = `=${first.script} ${firstKeys.length} ${firstArgs.length}`;
      for (let j = 0; j < shared.length; j++) {
        if (!shared[j]) continue;
        header += ` ${j + 1}`;
        args.push(firstArgs[j]!);
      }
      args[0] = header;
      for (const w of batch) {
        for (const key of w.keys) keys.push(key);
        for (let j = 0; j < w.args.length; j++) if (!shared[j]) args.push(w.args[j]!);
      }
    } else {
      args[0] = listSpec(batch);
      for (const w of batch) {
        for (const key of w.keys) keys.push(key);
        for (const arg of w.args) args.push(arg);
      }
    }
    const reply = attempt(() => call(keys, args));
    reply.then(
      (replies) => {
        if (!Array.isArray(replies) || !settleAll(batch, replies)) {
          const error = new Error(`scriptBatcher: unexpected reply from the batch script: ${String(replies).slice(0, 200)}`);
          for (const w of batch) w.reject(error);
        }
      },
      (error: unknown) => {
        for (const w of batch) w.reject(error);
      },
    );
    return reply;
  };

  const position = (script: string): number => {
    const found = positions.get(script);
    if (found === undefined) throw new TypeError('scriptBatcher: run() was given a script the batcher was not built with');
    return found;
  };
  if (!coalesce) {
    return {
      run: (script, keys, args) => {
        const p = position(script);
        return new Promise((resolve, reject) => void send([{ script: p, keys, args, resolve, reject }]).catch(() => {}));
      },
      flush: () => {},
    };
  }
  const slotOf = transport.slotOf;
  const turns = turnCoalescer<Waiting>({ maxBatchSize, batchesInFlight, send, groupOf: slotOf === undefined ? undefined : (w) => slotOf(w.keys[0]!) });
  return {
    run: (script, keys, args) => {
      const p = position(script);
      return new Promise((resolve, reject) => {
        const waiting: Waiting = { script: p, keys, args, resolve, reject };
        // The first call of an iteration goes at once (unless under load): a call alone waits for nothing.
        if (turns.first()) void send([waiting]).catch(() => {});
        else turns.add(waiting);
      });
    },
    flush: () => turns.flush(),
  };
}

/** The list form of the batch's ARGV[1] (see {@link batchScript}): each call's script, key count and argument count. */
function listSpec(batch: readonly Waiting[]): string {
  let spec = '';
  for (const w of batch) spec += `${w.script} ${w.keys.length} ${w.args.length} `;
  return spec;
}

/**
 * Settles each call of `batch` from the flat reply (see {@link batchScript}).
 * Checks the whole reply first: false, settling nothing, when it does not hold
 * exactly one entry per call.
 */
function settleAll(batch: readonly Waiting[], replies: readonly unknown[]): boolean {
  let at = 0;
  for (let i = 0; i < batch.length; i++) {
    const tag = replies[at];
    if (typeof tag !== 'number' || !Number.isInteger(tag) || tag < 0) return false;
    at += tag < 2 ? 2 : tag - 1;
  }
  if (at !== replies.length) return false;
  at = 0;
  for (const w of batch) {
    const tag = replies[at] as number;
    if (tag === 0) w.reject(new Error(String(replies[at + 1])));
    else if (tag === 1) w.resolve(replies[at + 1] ?? null);
    else w.resolve(replies.slice(at + 1, at + tag - 1));
    at += tag < 2 ? 2 : tag - 1;
  }
  return true;
}

/** `send()`, a throw turned into a rejection: a batch is sent from a tick, where a throw would reach no caller. */
function attempt(send: () => Promise<unknown>): Promise<unknown> {
  try {
    return send();
  } catch (error) {
    return Promise.reject(error);
  }
}

async function sha1Hex(text: string): Promise<string> {
  const digest = new Uint8Array(await globalThis.crypto.subtle.digest('SHA-1', new TextEncoder().encode(text)));
  let hex = '';
  for (const byte of digest) hex += byte.toString(16).padStart(2, '0');
  return hex;
}
