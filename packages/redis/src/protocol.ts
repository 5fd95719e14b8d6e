/**
 * How a decision travels to the ratekit Lua code and back, whatever carries it (the TCP store's
 * node-redis or ioredis client, the Upstash store's HTTP client): the Redis keys of a (namespace,
 * key), the one argument that encodes the policy, the cost, the mode and the clock, and the reply
 * turned into the decision with core's `evaluatePolicy`. One file for both stores, so that the
 * code sent and the code reading its reply are always the same version (a disagreement fails the
 * call: see `decide`). It uses nothing but the language (no `Buffer`, no Node module), so it runs
 * on every runtime.
 *
 * @module
 */
import { type Decision, type EvaluateRequest, evaluatePolicy, type LimitState, type ResolvedLimit, unnamedLimitId } from '@ratekit/core';

/** The keys and the argument of one decision, and how to read its reply. */
export interface DecisionProtocol {
  /** The keys (see DECISION_CODE's KEYS) and the one argument of `request`. */
  readonly encode: (request: EvaluateRequest) => { keys: string[]; argument: string };
  /** The reply to `request` as a decision; throws on a malformed reply or one @ratekit/core disagrees with. */
  readonly decode: (reply: unknown, request: EvaluateRequest) => Decision;
  /** The hash holding `key`'s states in `namespace`. */
  readonly keyFor: (key: string, namespace: string) => string;
  /** Every key a decision of `limits` on `key` in `namespace` reads and writes, in the script's order. */
  readonly keysFor: (key: string, namespace: string, limits: readonly ResolvedLimit[]) => string[];
  /** The keys `resetKey` deletes: the hash, and the expiry layout's keys of `limits` when given. */
  readonly resetKeysFor: (key: string, namespace: string, limits: readonly ResolvedLimit[] | undefined) => string[];
}

/**
 * The protocol of a store writing under `prefix` on `clock` (see the Redis store's documentation
 * for the key layout, the expiry layout and the clocks). It keeps the server's clock offset last
 * read, so each store has its own.
 */
export function decisionProtocol(prefix: string, clock: 'server' | 'caller'): DecisionProtocol {
  // One hash tag for every key of a (namespace, key): the length prefix keeps a user-controlled key
  // from spelling another namespace's; the hash and the expiry layout's keys share a Cluster slot.
  const tagOf = (key: string, namespace: string) => `{${namespace.length}:${namespace}:${key}}`;
  /** The hash, then the expiry layout's keys of `expiryIds`. */
  const hashAndExpiryKeys = (tag: string, expiryIds: readonly string[]): string[] => {
    const keys = [prefix + tag];
    for (const id of expiryIds) keys.push(prefix + id + tag);
    return keys;
  };
  /** The keys a decision of `policy` touches (see DECISION_CODE's KEYS): on the caller's clock, the hash alone. */
  const keysOf = (policy: PolicyArguments, tag: string): string[] => {
    if (clock === 'caller' || policy.expiryIds.length === 0) return [prefix + tag];
    if (policy.expiryOnly) return [prefix + policy.expiryIds[0] + tag];
    return hashAndExpiryKeys(tag, policy.expiryIds);
  };

  // A policy all in the expiry layout reads no TIME; its decisions report the server's time
  // as the limiter's clock plus the offset last read, once a second (`+`).
  const serverTime: ServerTime = { offsetMs: 0, readAtMs: Number.NaN };

  return {
    encode: (request) => {
      const { limits, mode, cost, nowMs } = request;
      const policy = policyArguments(limits);
      let argument: string;
      if (clock === 'server') {
        // A clock reading older than a second, never taken, or ahead of now (the limiter's clock went back).
        const readTime = policy.allExpiry && !(nowMs - serverTime.readAtMs < SERVER_TIME_READ_MS && nowMs >= serverTime.readAtMs);
        // The common request (consume 1) reuses one string per policy.
        argument = readTime ? `${mode} ${cost} +${policy.serverLimits}` : mode === 'consume' && cost === 1 ? policy.consumeOne : `${mode} ${cost} -${policy.serverLimits}`;
      } else {
        // On the caller's clock every limit is in the hash: a key's expiry follows the server's clock.
        argument = `${mode} ${cost} ${nowMs}${policy.limits}`;
      }
      return { keys: keysOf(policy, tagOf(request.key, request.namespace)), argument };
    },
    decode: (reply, request) => decide(reply, request.limits, request.mode, request.cost, request.nowMs, serverTime),
    keyFor: (key, namespace) => prefix + tagOf(key, namespace),
    keysFor: (key, namespace, limits) => keysOf(policyArguments(limits), tagOf(key, namespace)),
    // The hash always (the caller's clock, and limits that are not in the expiry layout, keep their
    // states there); the expiry layout's keys of the limits given. They share a slot.
    resetKeysFor: (key, namespace, limits) => hashAndExpiryKeys(tagOf(key, namespace), limits === undefined ? [] : policyArguments(limits).expiryIds),
  };
}

/** The UTF-8 length of `text` in bytes (what Redis counts), without `Buffer`. */
export function utf8ByteLength(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) bytes += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      // A surrogate pair: 4 bytes for 2 UTF-16 units.
      bytes += 2;
      i++;
    } else bytes += 2; // 3 bytes (a lone surrogate is written as U+FFFD, also 3).
  }
  return bytes;
}

/** How often, in ms of the limiter's clock, a store on the expiry layout reads the server's time. */
const SERVER_TIME_READ_MS = 1_000;

/** The server's clock as last read: server time − the limiter's clock, and when (the limiter's clock). */
interface ServerTime {
  offsetMs: number;
  readAtMs: number;
}

/** The script argument of a policy (see DECISION_CODE), on each clock, and its keys in the expiry layout. */
interface PolicyArguments {
  /** The limits' part on the caller's clock: every limit in the hash. */
  readonly limits: string;
  /** The limits' part on the server clock: the limits in the expiry layout have `~` ids. */
  readonly serverLimits: string;
  /** The whole argument of consume 1 on the server clock. */
  readonly consumeOne: string;
  /** The key-name part, `<byte length>:<id>`, of each limit in the expiry layout on the server clock, in order. */
  readonly expiryIds: readonly string[];
  /** One limit, in the expiry layout: its key is the decision's only key. */
  readonly expiryOnly: boolean;
  /** Every limit in the expiry layout: the script reads no TIME unless asked (`+`), and replies `=`. */
  readonly allExpiry: boolean;
}

/** Computed once per limits array: limiters resolve their policies once and pass the same frozen array on every call. */
const argumentCache = new WeakMap<readonly ResolvedLimit[], PolicyArguments>();

function policyArguments(limits: readonly ResolvedLimit[]): PolicyArguments {
  let args = argumentCache.get(limits);
  if (args === undefined) {
    let tail = '';
    let serverTail = '';
    const expiryIds: string[] = [];
    for (const limit of limits) {
      // An unnamed limit's id is made of all its parameters (core's resolveLimit), so the state in
      // its field was always written with these; a named limit's may have been written with others.
      const pinned = limit.id === unnamedIdOf(limit);
      const expiry = pinned && inExpiryLayout(limit);
      tail += limitArgument(limit, pinned ? ':' : '=');
      serverTail += limitArgument(limit, expiry ? '~' : pinned ? ':' : '=');
      // An unnamed limit's id (the only kind in the layout) holds no `{` or `}`: the key's hash tag stays the tag.
      if (expiry) expiryIds.push(`${utf8ByteLength(limit.id)}:${limit.id}`);
    }
    args = {
      limits: tail,
      serverLimits: serverTail,
      consumeOne: `consume 1 -${serverTail}`,
      expiryIds,
      expiryOnly: limits.length === 1 && expiryIds.length === 1,
      allExpiry: expiryIds.length === limits.length,
    };
    argumentCache.set(limits, args);
  }
  return args;
}

/**
 * Whether a limit whose id pins its parameters is kept in the expiry layout
 * on the server clock (see `DECISION_CODE`): a string key of its own whose
 * expiry is the state's end, read with PTTL, so a one-limit policy needs no
 * `TIME`. (A named limit never is: it may change its parameters, which would
 * move the end of a fixed window under way.) Taken by a limit without a
 * block that is GCRA with an emission interval and a tolerance of whole ms
 * (the key's PTTL is its TAT), or a fixed window of whole ms.
 */
function inExpiryLayout(limit: ResolvedLimit): boolean {
  if (limit.blockDurationMs > 0) return false;
  if (limit.algorithm === 'gcra') return Number.isInteger(limit.emissionIntervalMs) && Number.isInteger(limit.burst * limit.emissionIntervalMs);
  return limit.algorithm === 'fixed-window' && Number.isInteger(limit.windowMs);
}

function unnamedIdOf(limit: ResolvedLimit): string {
  return unnamedLimitId(limit.algorithm, limit.limit, limit.windowMs, limit.burst, limit.refill, limit.maxDelayMs, limit.refusedPenaltyCapMs, limit.blockDurationMs);
}

/**
 * One limit's part of the argument: ` <algorithm> <parameters…> <id byte length><separator><id>`
 * (`separator`: `:` when the id pins the parameters, `=` when it does not, `~` for a limit
 * in the expiry layout), with the parameters that algorithm reads, derived as core's algorithms
 * derive them (`T` = `emissionIntervalMs`, `tau` = `burst × T`). A number in
 * a template is its shortest round-trip decimal, so the script parses the
 * very same doubles. The id comes last, length-prefixed: a limit's name may
 * hold spaces or anything else.
 */
function limitArgument(limit: ResolvedLimit, separator: ':' | '=' | '~'): string {
  const T = limit.emissionIntervalMs;
  const id = `${utf8ByteLength(limit.id)}${separator}${limit.id}`;
  // A limit with a block names its algorithm <algorithm>/<blockDurationMs>.
  const algorithm = limit.blockDurationMs > 0 ? `${limit.algorithm}/${limit.blockDurationMs}` : limit.algorithm;
  switch (limit.algorithm) {
    case 'gcra':
      return ` ${algorithm} ${T} ${limit.burst * T} ${id}`;
    case 'delay':
      return ` ${algorithm} ${T} ${limit.burst * T} ${limit.maxDelayMs} ${limit.refusedPenaltyCapMs ?? '-'} ${id}`;
    case 'token-bucket':
      return ` ${algorithm} ${limit.burst} ${T} ${limit.limit} ${limit.windowMs} ${limit.refill} ${id}`;
    default:
      return ` ${algorithm} ${limit.limit} ${limit.windowMs} ${id}`;
  }
}

/**
 * Turns the script's reply into the decision: `evaluatePolicy` from
 * @ratekit/core, on the states the script read and the clock it used, so
 * every number is computed by the same code as the in-memory store's. The
 * script's own verdict (what it wrote) must agree; if it does not, the
 * script and this @ratekit/core disagree, and the call fails instead of
 * reporting a decision that was not enforced.
 */
function decide(reply: unknown, limits: readonly ResolvedLimit[], mode: EvaluateRequest['mode'], cost: number, callerNowMs: number, serverTime: ServerTime): Decision {
  const text = typeof reply === 'string' ? reply : String(reply);
  // `now verdict state₁ … stateₙ`, read in place (no split).
  const count = limits.length;
  const states = new Array<LimitState | undefined>(count);
  const space = text.indexOf(' ');
  let from = space + 3;
  let malformed = space < 1 || text.charCodeAt(space + 2) !== 32;
  for (let i = 0; i < count && !malformed; i++) {
    const next = text.indexOf(' ', from);
    const last = i === count - 1;
    // Exactly `count` states: a space after each but the last.
    const end = last ? text.length : next;
    if (last ? next !== -1 : next === -1) malformed = true;
    else if (end === from) malformed = true;
    else states[i] = parseState(text, from, end);
    from = end + 1;
  }
  if (malformed) throw new Error(`Unexpected reply from the ratekit script: ${text.slice(0, 200)}`);
  // `<ms>` (the caller's clock), `<seconds>/<microseconds>` as Redis TIME gave them (the script's
  // own now, seconds × 1000 + whole milliseconds, exact in doubles like the script's arithmetic),
  // or `=`: the expiry layout, whose times count from the server's now (0), with TIME after it
  // when asked for.
  const relative = text.charCodeAt(0) === 61; /* = */
  const from0 = relative ? 1 : 0;
  const slash = text.indexOf('/');
  const clockMs =
    from0 === space ? Number.NaN : slash === -1 || slash > space ? Number(text.slice(from0, space)) : Number(text.slice(from0, slash)) * 1000 + Math.floor(Number(text.slice(slash + 1, space)) / 1000);
  if (relative && from0 !== space) {
    serverTime.offsetMs = clockMs - callerNowMs;
    serverTime.readAtMs = callerNowMs;
  }
  const verdict = text[space + 1];
  const { decision } = evaluatePolicy(states, limits, cost, mode, relative ? 0 : clockMs);
  if (mode === 'consume' && decision.allowed !== (verdict === '1')) {
    throw new Error(
      `The ratekit Redis script ${verdict === '1' ? 'admitted' : 'refused'} a request that @ratekit/core ${decision.allowed ? 'admits' : 'refuses'}: use versions of @ratekit/redis and @ratekit/core released together`,
    );
  }
  // Every figure but nowMs is a duration: the expiry layout's decision takes the server's time, as
  // read. The decision was made for this call alone, so it is completed in place.
  if (relative) (decision as { nowMs: number }).nowMs = from0 === space ? callerNowMs + serverTime.offsetMs : clockMs;
  return decision;
}

/** A state as stored by the script, `text[from, end)`: `-` for none, else comma-separated decimal numbers (exact doubles). */
function parseState(text: string, from: number, end: number): LimitState | undefined {
  const comma = text.indexOf(',', from);
  if (comma === -1 || comma >= end) {
    if (end - from === 1 && text.charCodeAt(from) === 45 /* - */) return undefined;
    return [Number(text.slice(from, end))];
  }
  // Two numbers (a fixed window, a token bucket) without split's arrays.
  const second = text.indexOf(',', comma + 1);
  if (second === -1 || second >= end) return [Number(text.slice(from, comma)), Number(text.slice(comma + 1, end))];
  return text.slice(from, end).split(',').map(Number);
}
