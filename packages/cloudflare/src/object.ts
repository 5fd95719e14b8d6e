/**
 * The Durable Object that decides: `RateLimitObject`, exported for the user's Worker to export
 * and bind.
 *
 * Why a decision is atomic and exact: a Durable Object runs one event at a time, and while one
 * of its storage operations is in flight its input gate delivers no other event. A decision here
 * is one `storage.get` of its states, a synchronous `evaluatePolicy` (core's code, as every store
 * runs), and one `storage.put`/`delete` of what to write, with no other I/O between them: no
 * other decision on the same object can run in between. The output gate holds the reply until
 * the write is durable, so no caller sees a decision its storage could lose.
 *
 * Time: the object reads `Date.now()` once per decision. In a Worker the clock only moves between
 * I/O, so this is the time the request reached the object (the start of its event), the same for
 * the whole decision; objects on different machines read Cloudflare's synchronised clocks. The
 * calling Worker's clock (frozen during its own computation) plays no part on the server clock.
 *
 * Expiry: each write raises the object's alarm (never lowers it) to the latest time, on the
 * object's clock, any state it holds is still needed (the algorithm's `ttlMs`) plus a second; when
 * the alarm fires every state has expired, and the object deletes its storage, so an idle key
 * costs nothing.
 *
 * @module
 */
import { algorithms, evaluatePolicy, type LimitState, UNCHANGED } from '@ratekit/core';
import { decode, encode, type EvaluateReply, type ObjectRequest, stateKey, statePrefix } from './wire.js';

/** The part of `DurableObjectStorage` the object uses (key-value API; SQLite-backed and legacy objects alike). */
export interface DurableObjectStorageLike {
  get(keys: string[]): Promise<Map<string, unknown>>;
  put(entries: Record<string, unknown>): Promise<void>;
  delete(keys: string[]): Promise<number>;
  list(options: { prefix: string }): Promise<Map<string, unknown>>;
  deleteAll(): Promise<void>;
  getAlarm(): Promise<number | null>;
  setAlarm(scheduledTimeMs: number): Promise<void>;
}

/** The part of `DurableObjectState` (the constructor's first argument) the object uses. */
export interface DurableObjectStateLike {
  readonly storage: DurableObjectStorageLike;
}

/** How long after the last state's end the alarm deletes the object's storage, in ms. */
export const EXPIRY_SLACK_MS = 1_000;
/** The most keys one `storage.get`/`put`/`delete` takes (Cloudflare's limit). */
const STORAGE_BATCH = 128;

/**
 * A Durable Object class holding rate-limit state: the other half of {@link durableObjectStore}.
 * Export it from your Worker's main module and bind it (wrangler: a `durable_objects` binding
 * with `class_name = "RateLimitObject"`, and a migration with `new_sqlite_classes`); the store
 * talks to it with `fetch`, so it needs no RPC and runs on any compatibility date.
 *
 * Requests are the store's only (the object answers 400 to anything else); no other code should
 * call it.
 *
 * @example
 * ```ts
 * // worker.ts
 * export { RateLimitObject } from '@ratekit/cloudflare';
 * ```
 */
export class RateLimitObject {
  readonly #storage: DurableObjectStorageLike;
  /** The alarm as last read or set; undefined until read in this instance's life. */
  #alarmAtMs: number | null | undefined;

  constructor(state: DurableObjectStateLike, _env?: unknown) {
    this.#storage = state.storage;
  }

  /** Answers the store's requests: a decision (`evaluate`) or a reset. */
  async fetch(request: Request): Promise<Response> {
    // Only this package's store calls the object, but its body is read as untrusted JSON all the same.
    let body: { readonly op?: unknown };
    try {
      body = decode<{ readonly op?: unknown }>(await request.text());
    } catch {
      return new Response("ratekit: the body is not the store's JSON", { status: 400 });
    }
    try {
      if (body.op === 'evaluate') return new Response(encode(await this.#evaluate(body as Extract<ObjectRequest, { op: 'evaluate' }>)));
      if (body.op === 'reset') {
        const { namespace, key } = body as Extract<ObjectRequest, { op: 'reset' }>;
        await this.#reset(namespace, key);
        return new Response('{}');
      }
      return new Response('ratekit: unknown operation', { status: 400 });
    } catch (error) {
      return new Response(`ratekit: ${error instanceof Error ? error.message : String(error)}`, { status: 500 });
    }
  }

  /** Every state has expired: forget them all. */
  async alarm(): Promise<void> {
    this.#alarmAtMs = null;
    await this.#storage.deleteAll();
  }

  async #evaluate(request: Extract<ObjectRequest, { op: 'evaluate' }>): Promise<EvaluateReply> {
    const { limits, cost, mode } = request;
    const keys = limits.map((limit) => stateKey(request.namespace, request.key, limit.id));
    const stored = await this.#getAll(keys);
    // Read once, after the states: the time this event began (see the module's note on time).
    const nowMs = request.nowMs ?? Date.now();
    const states = keys.map((key) => stateOf(stored.get(key), key));
    const { decision, writes } = evaluatePolicy(states, limits, cost, mode, nowMs);
    const puts: Record<string, LimitState> = {};
    const deletes: string[] = [];
    // The longest any written state is still needed, in ms from now.
    let neededMs = -Infinity;
    writes.forEach((write, i) => {
      if (write === UNCHANGED) return;
      if (write === undefined) {
        if (states[i] !== undefined) deletes.push(keys[i]!);
        return;
      }
      // Written even when it has just expired (the algorithms read an expired state as none, and
      // the reported figures stay the in-memory store's); the alarm deletes it.
      puts[keys[i]!] = write;
      neededMs = Math.max(neededMs, algorithms[limits[i]!.algorithm].ttlMs(write, limits[i]!, nowMs));
    });
    // No await between the read and these writes: the input gate keeps other events out.
    const writing: Promise<unknown>[] = [];
    const putKeys = Object.keys(puts);
    for (let i = 0; i < putKeys.length; i += STORAGE_BATCH) writing.push(this.#storage.put(Object.fromEntries(putKeys.slice(i, i + STORAGE_BATCH).map((k) => [k, puts[k]]))));
    for (let i = 0; i < deletes.length; i += STORAGE_BATCH) writing.push(this.#storage.delete(deletes.slice(i, i + STORAGE_BATCH)));
    // On the object's clock, whichever clock decided: a caller's clock (tests replaying fixed times) must not set an alarm in the past.
    if (neededMs > -Infinity) writing.push(this.#raiseAlarm(Math.ceil((request.nowMs === undefined ? nowMs : Date.now()) + Math.max(0, neededMs)) + EXPIRY_SLACK_MS));
    await Promise.all(writing);
    return { nowMs, states: states.map((s) => s ?? null), allowed: decision.allowed };
  }

  async #reset(namespace: string, key: string): Promise<void> {
    const keys = [...(await this.#storage.list({ prefix: statePrefix(namespace, key) })).keys()];
    for (let i = 0; i < keys.length; i += STORAGE_BATCH) await this.#storage.delete(keys.slice(i, i + STORAGE_BATCH));
  }

  async #getAll(keys: string[]): Promise<Map<string, unknown>> {
    if (keys.length <= STORAGE_BATCH) return this.#storage.get(keys);
    const all = new Map<string, unknown>();
    for (let i = 0; i < keys.length; i += STORAGE_BATCH) for (const [k, v] of await this.#storage.get(keys.slice(i, i + STORAGE_BATCH))) all.set(k, v);
    return all;
  }

  /** Sets the alarm to `atMs` unless it is already at or after it. */
  async #raiseAlarm(atMs: number): Promise<void> {
    if (this.#alarmAtMs === undefined) this.#alarmAtMs = await this.#storage.getAlarm();
    if (this.#alarmAtMs !== null && this.#alarmAtMs >= atMs) return;
    this.#alarmAtMs = atMs;
    await this.#storage.setAlarm(atMs);
  }
}

/** A stored state, checked: an array of finite numbers (what the object writes), else undefined for none. */
function stateOf(value: unknown, key: string): LimitState | undefined {
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value) && value.every((n) => typeof n === 'number' && Number.isFinite(n))) return value as LimitState;
  throw new Error(`the storage key ${JSON.stringify(key)} holds a value this object did not write`);
}
