import {
  assertObject,
  assertOneOf,
  type Decision,
  type EvaluateRequest,
  RateKitOptionError,
  type RateLimitStore,
  type ResolvedLimit,
  DEFAULT_BATCHES_IN_FLIGHT,
  resolveCoalescing,
  turnCoalescer,
} from '@ratekit/core';
import calculateSlot from 'cluster-key-slot';
import { decisionProtocol } from './protocol.js';
import { redisScriptTransport } from './transport.js';
import { DECISION_BATCH_FUNCTION, DECISION_BATCH_SCRIPT, DECISION_BATCH_SCRIPT_SHA, DECISION_FUNCTION, DECISION_LIBRARY, DECISION_SCRIPT, DECISION_SCRIPT_SHA } from './scripts.js';

const STORE_NAME = 'redis';

/**
 * The part of a node-redis client (`redis` 5+, `createClient()`,
 * `createCluster()` or `createSentinel()`) the store uses. Commands are routed by their first key,
 * so a cluster client works unchanged. With `fCall` (every node-redis 5+
 * client has it) the store calls its function library, loaded with
 * `FUNCTION LOAD` through `sendCommand` (on a cluster, on the node of the
 * key); without it, or on a server without functions, its script.
 */
export interface NodeRedisClientLike {
  evalSha(sha1: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  /** FCALL, used when present (with `sendCommand`). */
  fCall?(name: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  del(keys: string | string[]): Promise<unknown>;
}

/**
 * The part of an ioredis client (`new Redis()`, also with `sentinels`, or
 * `new Cluster()`) the store uses. ioredis routes by key on a cluster, and applies its `keyPrefix`
 * option to the store's keys as to any other. With `fcall` (ioredis 5+) the
 * store calls its function library, loaded with `FUNCTION LOAD` through
 * `call` (on a cluster, on every master); without it, or on a server
 * without functions, its script.
 */
export interface IoRedisClientLike {
  evalsha(sha1: string, numberOfKeys: number, ...keysAndArguments: string[]): Promise<unknown>;
  eval(script: string, numberOfKeys: number, ...keysAndArguments: string[]): Promise<unknown>;
  /** FCALL, used when present (with `call`). */
  fcall?(name: string, numberOfKeys: number, ...keysAndArguments: string[]): Promise<unknown>;
  del(...keys: string[]): Promise<unknown>;
}

/** A node-redis or ioredis client or cluster, connected and owned by the caller. */
export type RedisClientLike = NodeRedisClientLike | IoRedisClientLike;

/** Options of {@link redisStore}. */
export interface RedisStoreOptions {
  /**
   * The client: node-redis (`redis` 5+) or ioredis, single node or cluster.
   * The store never connects, quits or reconfigures it. Both pipeline
   * concurrent decisions on one connection; ioredis costs the client less
   * CPU per decision (see the README's "Cost and throughput"). For outages,
   * configure it to fail fast while
   * disconnected and to keep reconnecting (node-redis `disableOfflineQueue`;
   * ioredis `enableOfflineQueue: false`, `maxRetriesPerRequest: 0`): see the README.
   */
  client: RedisClientLike;
  /**
   * Prepended to every key the store writes, to share a Redis with other
   * data. Must not contain `{` or `}`: the store puts its own hash tag after it.
   * @default 'ratekit:'
   */
  prefix?: string;
  /**
   * Whose clock decides:
   * - `server` (default): Redis's clock decides (the script reads `TIME`, or,
   *   in the expiry layout, a key's expiry is the clock), so app servers with
   *   skewed clocks agree, and the limiter's `now` option is ignored;
   * - `caller`: the limiter's clock (`EvaluateRequest.nowMs`), for tests on
   *   fixed clocks and for replaying schedules.
   * @default 'server'
   */
  clock?: 'server' | 'caller';
  /**
   * Coalescing: the decisions asked of this store in one iteration of the
   * event loop after its first (which is sent at once, alone), until the
   * `setImmediate` the first schedules (the check phase, after every I/O
   * callback that was ready, so the requests read in one poll phase
   * join), go to Redis in batches (FCALL of the library's batch function, or
   * EVALSHA of the batch script), each of which decides its decisions in
   * order, each atomically and exactly as it would alone, and answers each
   * one. On a cluster, one batch per hash slot. A batch is sent before the
   * check phase once it holds its share of the decisions pending (see
   * `batchesInFlight`), or `maxBatchSize`. Under load (decisions joined the
   * previous iteration's first), the first waits with the others; an
   * iteration of a single decision sends it alone and opens again.
   * A decision that fails inside the batch (a key of the wrong type, a bad
   * state) rejects alone; a call that fails (a connection error)
   * rejects each of its decisions. The limiter's `storeTimeoutMs` and
   * `onStoreError` apply to each decision as without coalescing.
   * `false`: one call per decision.
   * @default true
   */
  coalesce?: boolean;
  /**
   * The most decisions in one coalesced call (an integer ≥ 2): a batch that
   * reaches it is sent at once, and the iteration's next decisions start
   * another. Redis runs a call without interruption: a
   * batch of n decisions holds the server as long as n lone decisions in a row.
   * @default 64
   */
  maxBatchSize?: number;
  /**
   * How many coalesced calls the store aims to have in flight at once (an
   * integer ≥ 0): a batch is sent as soon as it holds at least 16 decisions
   * and `1 / batchesInFlight` of the decisions pending (waiting, or in a call
   * not yet answered). Redis then decides one batch while this process
   * builds the next, instead of each waiting for the other: one call holding
   * every decision in flight was up to 27% slower than no coalescing at all
   * (bench/notes/coalescing.md). `0`: a batch goes only at the check phase
   * or at `maxBatchSize` (one call per iteration).
   * @default 2 on a client that writes each command at once (ioredis); 0 on one that writes the commands of an iteration together (node-redis, ioredis with `enableAutoPipelining`), where batches sent apart would reach Redis together anyway
   */
  batchesInFlight?: number;
}

/** The Redis store. */
export interface RedisStore extends RateLimitStore {
  /** Always asynchronous: one round trip per decision. */
  evaluate(request: EvaluateRequest): Promise<Decision>;
  /**
   * Deletes `key`'s state in `namespace`: its hash and, for the `limits`
   * given, their keys in the expiry layout (see {@link redisStore}), in one
   * `DEL`. Without `limits` only the hash: on the server clock, pass the
   * policy (the limiter's `reset` does) so that GCRA and fixed-window limits
   * are reset too.
   */
  resetKey(key: string, namespace: string, limits?: readonly ResolvedLimit[]): Promise<void>;
  /**
   * Sends at once the decisions waiting for their coalesced call (see
   * {@link RedisStoreOptions.coalesce}), so that none is sent after the
   * caller closes the client. The client is the caller's: it is not closed.
   */
  dispose(): void;
  /** The prefix of every key, as configured. */
  readonly prefix: string;
  /** The hash holding `key`'s states in `namespace` (a field per limit id) outside the expiry layout. For inspection and tests. */
  keyFor(key: string, namespace: string): string;
  /**
   * Every Redis key a decision of `limits` on `key` in `namespace` reads and
   * writes, in the order the script takes them (see {@link redisStore}): the
   * hash, then the keys of the limits in the expiry layout; for a one-limit
   * policy in that layout, its key alone. For inspection and tests.
   */
  keysFor(key: string, namespace: string, limits: readonly ResolvedLimit[]): string[];
}

/**
 * A store on Redis: every decision, whatever its algorithms and however many
 * limits its policy has, is one atomic Lua call: FCALL of the store's
 * function library on Redis 7 and later (loaded with `FUNCTION LOAD` and
 * called again when the server does not have it, e.g. after a restart
 * without persistence or `FUNCTION FLUSH`), else EVALSHA of the same code as
 * a script (falling back to EVAL when the server does not have the script
 * cached, e.g. after a restart, a failover or `SCRIPT FLUSH`).
 *
 * - **Keys.** One hash per (namespace, key), `<prefix>{<namespace length>:<namespace>:<key>}`,
 *   with one field per limit id. The length prefix keeps a user-controlled
 *   key from ever spelling another namespace's key; the `{…}` hash tag keeps
 *   everything of one key on one Redis Cluster slot.
 * - **Expiry layout** (server clock): an unnamed limit without a block that
 *   is GCRA with an emission interval and tolerance of whole ms, or a fixed
 *   window of whole ms, is kept instead in a string key of its own,
 *   `<prefix><id length>:<id>{…}` with the same hash tag, whose expiry is the
 *   state's end (GCRA: the TAT; fixed window: the window's end, the value
 *   its count). A policy of such limits only reads no `TIME`: a one-limit consume
 *   is two commands in the script (PTTL, PEXPIRE; INCRBY, PTTL) where the hash
 *   takes three. Its decisions' `nowMs` (only the legacy epoch header reads
 *   it) is the server's time estimated as the limiter's clock plus their
 *   offset, read with `TIME` once a second of the limiter's clock. A GCRA
 *   TAT there is kept to the whole ms, rounded up when a fractional cost
 *   leaves a fraction. The limit's state is the same whichever policy
 *   uses it. `resetKey` needs the policy to find these keys (the limiter's
 *   `reset` passes it). Upgrading from a version without this layout starts
 *   such limits afresh, once.
 * - **Decisions.** The script decides and writes; it replies with the clock
 *   reading and the states it read, and the store computes the reported
 *   decision from them with core's `evaluatePolicy`, the same code as the
 *   in-memory store. States travel as strings of 17 significant digits, so
 *   fractional tokens and milliseconds come back exactly.
 * - **Expiry.** When a write needs it, the key's TTL is raised (never
 *   lowered) to the longest time any of its states stays meaningful plus one
 *   second, with headroom (an eighth, at least one more second) so a busy
 *   key is not re-expired on every request; idle keys disappear.
 * - **Clock.** Redis `TIME` by default, so skewed app servers agree.
 * - **Failures.** A failed or timed-out call rejects; the limiter's
 *   `onStoreError` and `storeTimeoutMs` decide what the request gets.
 *
 * Needs Redis 5 or later (or a compatible server with Lua scripting); uses
 * functions on Redis 7 and later, unless the ACL user may not.
 *
 * @throws {RateKitOptionError} when `client` is not a node-redis or ioredis client, `prefix` is not a string without `{`/`}`, or `clock` is not `'server'` or `'caller'`.
 * @example
 * ```ts
 * import { createClient } from 'redis';
 * import { createLimiter } from '@ratekit/core';
 * import { redisStore } from '@ratekit/redis';
 *
 * // Fail fast while disconnected, keep reconnecting, and listen for errors (see the README).
 * const client = createClient({ url: process.env.REDIS_URL, disableOfflineQueue: true });
 * client.on('error', (error) => console.warn(error));
 * await client.connect();
 * const limiter = createLimiter({
 *   limits: [{ algorithm: 'gcra', limit: 10, windowMs: 1_000 }, { limit: 1_000, windowMs: 3_600_000 }],
 *   store: redisStore({ client }),
 *   onStoreError: 'allow',
 *   storeTimeoutMs: 200,
 * });
 * const decision = await limiter.consume('user:42');
 * ```
 */
export function redisStore(options: RedisStoreOptions): RedisStore {
  assertObject('options', options);
  const runner = scriptRunner(options.client);
  const prefix = options.prefix ?? 'ratekit:';
  if (typeof prefix !== 'string' || prefix.includes('{') || prefix.includes('}')) {
    throw new RateKitOptionError('prefix', 'a string without `{` or `}`', prefix);
  }
  const clock = options.clock ?? 'server';
  assertOneOf('clock', clock, ['server', 'caller'] as const);
  // Batches in flight only overlap when each is written at once: a client that writes an iteration's
  // commands together sends them together anyway (bench/notes/coalescing.md, "Never slower").
  const { coalesce, maxBatchSize, batchesInFlight } = resolveCoalescing(options, runner.writesEachCommand ? DEFAULT_BATCHES_IN_FLIGHT : 0);
  const coalescing = coalesce ? coalescer(runner, maxBatchSize, batchesInFlight) : undefined;
  const send = coalescing === undefined ? runner : coalescing.send;

  const protocol = decisionProtocol(prefix, clock);

  function evaluate(request: EvaluateRequest): Promise<Decision> {
    const { keys, argument } = protocol.encode(request);
    return send(keys, argument).then((reply) => protocol.decode(reply, request));
  }

  return {
    name: STORE_NAME,
    shared: true,
    clock,
    prefix,
    keyFor: protocol.keyFor,
    keysFor: protocol.keysFor,
    evaluate,
    async resetKey(key, namespace, limits) {
      // One DEL: the keys share a slot.
      await runner.del(protocol.resetKeysFor(key, namespace, limits));
    },
    dispose() {
      // Decisions waiting for their iteration's batch go now, before the caller closes the client.
      coalescing?.flush();
    },
  };
}

/** Runs one decision on its keys with its one argument (loading the code the server lacks); and deletes keys. */
interface ScriptRunner {
  (keys: string[], argument: string): Promise<unknown>;
  /** Several decisions in one call (see DECISION_BATCH_FUNCTION): their keys, then the key counts and each argument. */
  many(keys: string[], args: string[]): Promise<unknown>;
  del(keys: string[]): Promise<unknown>;
  /** The hash slot of a key when the client is a cluster's (decisions of one slot go in one call), else undefined. */
  readonly slotOf: ((key: string) => number) | undefined;
  /** See {@link Transport.writesEachCommand}. */
  readonly writesEachCommand: boolean;
}

/** How one client sends the decision: as a function (when it can) and as a script. */
interface Transport {
  /** FCALL of {@link DECISION_FUNCTION}, or undefined when the client cannot send it. */
  readonly fcall: ((keys: string[], argument: string) => Promise<unknown>) | undefined;
  /** FUNCTION LOAD of {@link DECISION_LIBRARY} on the node of `key` (on every master when the client cannot route it by key). */
  readonly load: (key: string) => Promise<unknown>;
  /** EVALSHA, then EVAL on NOSCRIPT. */
  readonly script: (keys: string[], argument: string) => Promise<unknown>;
  /** DEL of keys of one slot, in one command. */
  readonly del: (keys: string[]) => Promise<unknown>;
  /** FCALL of {@link DECISION_BATCH_FUNCTION}, when `fcall` is defined. */
  readonly fcallMany: (keys: string[], args: string[]) => Promise<unknown>;
  /** EVALSHA of the batch script, then EVAL on NOSCRIPT. */
  readonly scriptMany: (keys: string[], args: string[]) => Promise<unknown>;
  /** Whether the client is a cluster's. */
  readonly cluster: boolean;
  /**
   * Whether the client writes each command to the socket when it is sent
   * (ioredis), rather than the commands of an iteration together (node-redis,
   * at its `setImmediate`; ioredis with `enableAutoPipelining`).
   */
  readonly writesEachCommand: boolean;
}

type Send = (...args: unknown[]) => Promise<unknown>;

function scriptRunner(client: unknown): ScriptRunner {
  return runnerOn(transport(client));
}

function transport(client: unknown): Transport {
  // Which library, whether a cluster's, and the script call (EVALSHA, EVAL on NOSCRIPT): the exported transport's.
  const base = redisScriptTransport(client);
  const c = client as Partial<NodeRedisClientLike & IoRedisClientLike> & Record<string, unknown>;
  if (base === undefined || typeof c.del !== 'function') throw new RateKitOptionError('client', 'a node-redis (redis 5+) or ioredis client or cluster', client);
  const script = (keys: string[], argument: string) => base.run(DECISION_SCRIPT, DECISION_SCRIPT_SHA, keys, [argument]);
  const scriptMany = (keys: string[], args: string[]) => base.run(DECISION_BATCH_SCRIPT, DECISION_BATCH_SCRIPT_SHA, keys, args);
  if (base.library === 'node-redis') {
    const nodeRedis = client as NodeRedisClientLike;
    const sendCommand = c.sendCommand as Send | undefined;
    // A node-redis cluster routes sendCommand by its first argument, a key; a client takes the command alone.
    const cluster = base.cluster;
    // A node-redis Sentinel client (createSentinel) takes whether the command is read-only first.
    const sentinel = typeof c.getMasterNode === 'function';
    return {
      fcall: typeof nodeRedis.fCall === 'function' && typeof sendCommand === 'function' ? (keys, argument) => nodeRedis.fCall!(DECISION_FUNCTION, { keys, arguments: [argument] }) : undefined,
      load: (key) => {
        const command = ['FUNCTION', 'LOAD', DECISION_LIBRARY];
        if (cluster) return sendCommand!.call(client, key, false, command);
        return sentinel ? sendCommand!.call(client, false, command) : sendCommand!.call(client, command);
      },
      script,
      del: (keys) => nodeRedis.del(keys),
      fcallMany: (keys, args) => nodeRedis.fCall!(DECISION_BATCH_FUNCTION, { keys, arguments: args }),
      scriptMany,
      cluster,
      writesEachCommand: base.writesEachCommand,
    };
  }
  const ioredis = client as IoRedisClientLike;
  const call = c.call as Send | undefined;
  // An ioredis Cluster sends a command without a key to any node: load on every master.
  const nodes = c.nodes as ((role: string) => { call: Send }[]) | undefined;
  return {
    fcall:
      typeof ioredis.fcall === 'function' && typeof call === 'function'
        ? (keys, argument) => (keys.length === 1 ? ioredis.fcall!(DECISION_FUNCTION, 1, keys[0]!, argument) : ioredis.fcall!(DECISION_FUNCTION, keys.length, ...keys, argument))
        : undefined,
    load: () =>
      typeof nodes === 'function'
        ? Promise.all(nodes.call(client, 'master').map((node) => node.call('FUNCTION', 'LOAD', DECISION_LIBRARY).catch(ignoreLoaded)))
        : call!.call(client, 'FUNCTION', 'LOAD', DECISION_LIBRARY),
    script,
    del: (keys) => ioredis.del(...keys),
    fcallMany: (keys, args) => ioredis.fcall!(DECISION_BATCH_FUNCTION, keys.length, ...keys, ...args),
    scriptMany,
    cluster: base.cluster,
    writesEachCommand: base.writesEachCommand,
  };
}

/**
 * FCALL while the server has functions; on "Function not found" (a new
 * server or cluster node, a restart, `FUNCTION FLUSH`) FUNCTION LOAD, then
 * FCALL again. For good to the script (EVALSHA) when the server has no
 * functions (Redis < 7), the user may not use them, or FUNCTION LOAD fails
 * for any reason: the script does the same work, slower (packages/redis/README.md).
 */
function runnerOn(t: Transport): ScriptRunner {
  // One switch for both calls: once the server has no functions for one, it has none for the other.
  const state = { functions: t.fcall !== undefined };
  const run = withFallback(state, t, t.fcall!, t.script) as ScriptRunner;
  (run as { many: ScriptRunner['many'] }).many = withFallback(state, t, t.fcallMany, t.scriptMany);
  run.del = t.del;
  (run as { slotOf: ScriptRunner['slotOf'] }).slotOf = t.cluster ? calculateSlot : undefined;
  (run as { writesEachCommand: boolean }).writesEachCommand = t.writesEachCommand;
  return run;
}

/** `fcall` while the server has functions (loading the library on "Function not found"), else `script`; see {@link runnerOn}. */
function withFallback<A>(state: { functions: boolean }, t: Transport, fcall: (keys: string[], a: A) => Promise<unknown>, script: (keys: string[], a: A) => Promise<unknown>) {
  const toScript = (keys: string[], a: A) => {
    state.functions = false;
    return script(keys, a);
  };
  return (keys: string[], a: A): Promise<unknown> => {
    if (!state.functions) return script(keys, a);
    return fcall(keys, a).catch((error: unknown) => {
      if (!isFunctionNotFound(error)) {
        if (functionsUnavailable(error)) return toScript(keys, a);
        throw error;
      }
      return t
        .load(keys[0]!)
        .catch(ignoreLoaded)
        .then(
          () =>
            fcall(keys, a).catch((again: unknown) => {
              // Loaded elsewhere (the cluster moved the key meanwhile): the script decides this one.
              if (isFunctionNotFound(again)) return script(keys, a);
              throw again;
            }),
          // The server answered FCALL but would not load the library (an ACL, a managed service
          // that refuses FUNCTION, or whatever else): the script does the same work.
          () => toScript(keys, a),
        );
    });
  };
}

/** `send()`, a throw turned into a rejection: the batch is sent from a tick, where a throw would reach no caller. */
function attempt(send: () => Promise<unknown>): Promise<unknown> {
  try {
    return send();
  } catch (error) {
    return Promise.reject(error);
  }
}

/** A decision waiting for its batch. */
interface Waiting {
  readonly keys: string[];
  readonly argument: string;
  readonly resolve: (reply: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Coalescing (see {@link RedisStoreOptions.coalesce}), scheduled by core's
 * `turnCoalescer`: the first decision of an iteration of the event loop is
 * sent at once, as a lone call (so a decision alone waits for nothing); the
 * decisions asked after it, in the same iteration, wait until its check
 * phase (`setImmediate`), or until their group holds `maxBatchSize`; each
 * group (one per hash slot on a cluster, else one) then goes as one batch
 * call, or as a lone call when it holds one. On one connection the lone call
 * is ahead of the batch, so a key's decisions keep their order. No timer.
 * Under load the first waits with the others (see `turnCoalescer`):
 * bench/notes/coalescing.md.
 */
function coalescer(runner: ScriptRunner, maxBatchSize: number, batchesInFlight: number): { send: (keys: string[], argument: string) => Promise<unknown>; flush: () => void } {
  const slotOf = runner.slotOf;
  const sendBatch = (batch: Waiting[]) => {
    if (batch.length === 1) {
      const w = batch[0]!;
      const reply = attempt(() => runner(w.keys, w.argument));
      reply.then(w.resolve, w.reject);
      return reply;
    }
    const keys: string[] = [];
    const args: string[] = [''];
    let counts = '';
    let multi = false;
    let previous = '';
    for (const w of batch) {
      for (const key of w.keys) keys.push(key);
      if (w.keys.length !== 1) multi = true;
      counts += counts === '' ? `${w.keys.length}` : ` ${w.keys.length}`;
      // The same argument as the decision before (mostly: one policy, consume 1) goes as '' and is read once.
      args.push(w.argument === previous ? '' : w.argument);
      previous = w.argument;
    }
    if (multi) args[0] = counts;
    // Returned as is, not chained: the coalescer's count of decisions in flight drops with the reply
    // (its reaction is queued beside the one below), before the decisions it resolves ask again.
    const call = attempt(() => runner.many(keys, args));
    call.then(
      (replies) => {
        if (!Array.isArray(replies) || replies.length !== batch.length) {
          const error = new Error(`Unexpected reply from the ratekit batch function: ${String(replies).slice(0, 200)}`);
          for (const w of batch) w.reject(error);
          return;
        }
        for (let i = 0; i < batch.length; i++) {
          const reply: unknown = replies[i];
          // '!': this decision failed alone, inside the batch.
          if (typeof reply === 'string' && reply.charCodeAt(0) === 33) batch[i]!.reject(new Error(reply.slice(1)));
          else batch[i]!.resolve(reply);
        }
      },
      (error: unknown) => {
        for (const w of batch) w.reject(error);
      },
    );
    return call;
  };
  const turns = turnCoalescer<Waiting>({ maxBatchSize, batchesInFlight, send: sendBatch, groupOf: slotOf === undefined ? undefined : (w) => slotOf(w.keys[0]!) });
  return {
    send: (keys, argument) => {
      // The first decision of an iteration goes at once, as a lone call (unless under load): a decision alone waits for nothing.
      if (turns.first()) return runner(keys, argument);
      return new Promise((resolve, reject) => {
        turns.add({ keys, argument, resolve, reject });
      });
    },
    flush: () => turns.flush(),
  };
}

function errorMessage(error: unknown): string {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : '';
}

function isFunctionNotFound(error: unknown): boolean {
  return /^ERR Function not found/i.test(errorMessage(error));
}

/** FCALL unknown (Redis < 7, or a server or proxy without functions), refused by ACL, or refused by a managed service. */
function functionsUnavailable(error: unknown): boolean {
  return /^(ERR unknown command|ERR unknown subcommand|NOPERM|ERR .*(not allowed|not supported|disabled))/i.test(errorMessage(error));
}

/** FUNCTION LOAD answers that the library is already there (another client, or another call, loaded it): it is. */
function ignoreLoaded(error: unknown): unknown {
  if (/^ERR Library .* already exists/i.test(errorMessage(error))) return undefined;
  throw error;
}
