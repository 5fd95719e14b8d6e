/**
 * The Durable Objects store: the Worker side. Each decision goes to the object that holds its
 * key (one per key, or one of a namespace's shards) and is decided there, atomically (see
 * object.ts); the Worker rebuilds the reported decision from the object's reply with core's
 * `evaluatePolicy` (see wire.ts), so both sides run the same code.
 *
 * @module
 */
import { assertInteger, assertObject, assertOneOf, type Decision, type EvaluateRequest, evaluatePolicy, type LimitState, RateKitError, RateKitOptionError, type RateLimitStore } from '@ratekit/core';
import { decode, encode, type EvaluateReply, OBJECT_URL, objectName, type ObjectRequest } from './wire.js';

const STORE_NAME = 'durable-object';

/** The part of a `Response` the store reads (structural, so any runtime's and any type package's `Response` fits). */
export interface ResponseLike {
  readonly ok: boolean;
  readonly status: number;
  text(): Promise<string>;
}

/** The part of a Durable Object stub the store uses. */
export interface DurableObjectStubLike {
  fetch(input: string, init: { method: string; body: string; headers: Record<string, string> }): Promise<ResponseLike>;
}

/** The part of a `DurableObjectNamespace` binding (`env.RATE_LIMITER`) the store uses. */
export interface DurableObjectNamespaceLike {
  idFromName(name: string): unknown;
  get(id: never): DurableObjectStubLike;
}

/** Options of {@link durableObjectStore}. */
export interface DurableObjectStoreOptions {
  /** The binding of {@link RateLimitObject}'s namespace, e.g. `env.RATE_LIMITER`. */
  namespace: DurableObjectNamespaceLike;
  /**
   * Spread keys over this many objects per limiter namespace (an integer ≥ 1), chosen by a hash
   * of the key, instead of one object per key. One object per key (the default) spreads load
   * best and lets each object live near its client; shards fit many keys with little traffic
   * each. An object serialises its decisions: a shard's throughput is shared by its keys.
   * Changing the count moves keys to other objects: their state starts afresh, once.
   * @default undefined (one object per key)
   */
  shards?: number;
  /**
   * Whose clock decides: `server` (default), the object's (`Date.now()` in the object when the
   * request reaches it), so the calling Worker's clock, which stands still while it computes,
   * does not matter; `caller`: the limiter's `now`, for tests on fixed clocks.
   * @default 'server'
   */
  clock?: 'server' | 'caller';
}

/** The Durable Objects store. */
export interface DurableObjectStore extends RateLimitStore {
  evaluate(request: EvaluateRequest): Promise<Decision>;
  resetKey(key: string, namespace: string): Promise<void>;
  /** The name of the object holding `key` in `namespace` (`namespace.idFromName(name)`). For inspection and tests. */
  objectNameFor(key: string, namespace: string): string;
}

/**
 * A store on Cloudflare Durable Objects: every algorithm and every multi-limit policy, decided
 * all-or-nothing inside the {@link RateLimitObject} that holds the key, exactly and atomically
 * (one object runs one decision at a time), its state in the object's durable storage. One
 * request (a subrequest to the object) per decision.
 *
 * Failures: a failed call to the object (the object threw, was reset, or is unreachable) rejects
 * with a `RateKitError` of code `ERR_RATEKIT_STORE`, its `cause` the original; the limiter's
 * `onStoreError` and `storeTimeoutMs` apply.
 *
 * Not Workers KV: KV is eventually consistent and takes one write per second per key, so it
 * cannot count exactly; ratekit offers no KV store.
 *
 * @throws {RateKitOptionError} when `namespace` is not a Durable Object namespace binding, `shards` is not an integer ≥ 1, or `clock` is not `'server'` or `'caller'`.
 * @example
 * ```ts
 * import { createLimiter } from '@ratekit/core';
 * import { durableObjectStore } from '@ratekit/cloudflare';
 * export { RateLimitObject } from '@ratekit/cloudflare';
 *
 * export default {
 *   async fetch(request, env) {
 *     const limiter = createLimiter({ limits: [{ algorithm: 'gcra', limit: 10, windowMs: 1_000 }], store: durableObjectStore({ namespace: env.RATE_LIMITER }) });
 *     const decision = await limiter.consume(request.headers.get('cf-connecting-ip') ?? 'unknown');
 *     return decision.allowed ? new Response('ok') : new Response('Too Many Requests', { status: 429 });
 *   },
 * };
 * ```
 */
export function durableObjectStore(options: DurableObjectStoreOptions): DurableObjectStore {
  assertObject('options', options);
  const binding = options.namespace as Partial<DurableObjectNamespaceLike> | null | undefined;
  if (typeof binding !== 'object' || binding === null || typeof binding.idFromName !== 'function' || typeof binding.get !== 'function') {
    throw new RateKitOptionError('namespace', "a Durable Object namespace binding (env.<BINDING>, bound to ratekit's RateLimitObject)", options.namespace);
  }
  const namespace = options.namespace;
  const shards = options.shards;
  if (shards !== undefined) assertInteger('shards', shards, 1);
  const clock = options.clock ?? 'server';
  assertOneOf('clock', clock, ['server', 'caller'] as const);

  async function call(key: string, limiterNamespace: string, body: ObjectRequest): Promise<string> {
    const stub = namespace.get(namespace.idFromName(objectName(limiterNamespace, key, shards)) as never);
    const response = await stub.fetch(OBJECT_URL, { method: 'POST', body: encode(body), headers: { 'content-type': 'application/json' } });
    const text = await response.text();
    if (!response.ok) throw new Error(`the object answered ${response.status}: ${text.slice(0, 300)}`);
    return text;
  }

  return {
    name: STORE_NAME,
    shared: true,
    clock,
    objectNameFor: (key, limiterNamespace) => objectName(limiterNamespace, key, shards),
    async evaluate(request) {
      const { key, limits, cost, mode } = request;
      let reply: EvaluateReply;
      try {
        const body: ObjectRequest = { op: 'evaluate', key, namespace: request.namespace, limits, cost, mode, ...(clock === 'caller' ? { nowMs: request.nowMs } : {}) };
        reply = decode<EvaluateReply>(await call(key, request.namespace, body));
      } catch (error) {
        throw storeError('call failed', error);
      }
      if (typeof reply.nowMs !== 'number' || !Array.isArray(reply.states) || reply.states.length !== limits.length) {
        throw storeError('object sent a reply the store cannot use', new Error(String(encode(reply)).slice(0, 200)));
      }
      const states = reply.states.map((state) => (state === null ? undefined : (state as LimitState)));
      const { decision } = evaluatePolicy(states, limits, cost, mode, reply.nowMs);
      if (mode === 'consume' && decision.allowed !== reply.allowed) {
        throw storeError(
          'object disagrees',
          new Error(
            `The RateLimitObject ${reply.allowed ? 'admitted' : 'refused'} a request that this @ratekit/core ${decision.allowed ? 'admits' : 'refuses'}: deploy the object and the store from one version of @ratekit/cloudflare`,
          ),
        );
      }
      return decision;
    },
    async resetKey(key, limiterNamespace) {
      try {
        await call(key, limiterNamespace, { op: 'reset', key, namespace: limiterNamespace });
      } catch (error) {
        throw storeError('reset failed', error);
      }
    },
  };
}

function storeError(what: string, cause: unknown): RateKitError {
  return new RateKitError('ERR_RATEKIT_STORE', `The durable-object store's ${what}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
}
