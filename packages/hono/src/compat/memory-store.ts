/**
 * hono-rate-limiter's `MemoryStore`, without its timer. The rule: a key's
 * hits live in two generations of maps, `current` and `previous`; every
 * `windowMs` the current generation becomes the previous one and the old
 * previous is dropped, so a key unseen for two windows is forgotten in bulk
 * (express-rate-limit's design, which hono-rate-limiter copies).
 *
 * hono-rate-limiter turns the generations with a `setInterval` started in
 * `init`. A Cloudflare Worker cannot start a timer at start-up, where a
 * limiter is usually built, so here the turn is computed, not scheduled:
 * every read of `current` or `previous` first turns as many generations as
 * whole windows have passed since the last turn (two or more empty both).
 * The maps seen at any instant are the ones the timer would have left, so
 * counts, resets and `get` answer as upstream's do; no timer, nothing to
 * `unref`, and `shutdown` only empties the store.
 *
 * Each key's window still ends at its own `resetTime` (first hit +
 * `windowMs`), checked on `increment`, as upstream.
 *
 * @module
 */
import type { Env, Input } from 'hono';
import type { ClientRateLimitInfo, HonoConfigType, Store } from './types.js';

interface Client {
  totalHits: number;
  resetTime: Date;
}

/**
 * The in-memory store of hono-rate-limiter 0.5.4, timer-free (safe at a
 * Worker's module scope). Counts are per process (or per isolate).
 *
 * @example
 * ```ts
 * import { MemoryStore, rateLimiter } from '@ratekit/hono';
 * app.use(rateLimiter({ keyGenerator: (c) => c.req.header('x-api-key') ?? '', store: new MemoryStore() }));
 * ```
 * @see https://github.com/rhinobase/hono-rate-limiter (its `MemoryStore`)
 */
export class MemoryStore<E extends Env = Env, P extends string = string, I extends Input = Input> implements Store<E, P, I> {
  /** Counts are kept in this process only. */
  readonly localKeys = true;
  #windowMs = 60_000;
  #current = new Map<string, Client>();
  #previous = new Map<string, Client>();
  /** When the generations last turned, Unix epoch ms. */
  #turnedAtMs = Date.now();

  /** The generation keys hit in the latest window live in. */
  get current(): Map<string, Client> {
    this.#turn(Date.now());
    return this.#current;
  }

  /** The generation before it: keys unseen since the last turn. */
  get previous(): Map<string, Client> {
    this.#turn(Date.now());
    return this.#previous;
  }

  /** Takes the window from the middleware's options and starts the generations' clock. */
  init(options: Pick<HonoConfigType<E, P, I>, 'windowMs'>): void {
    this.#windowMs = options.windowMs;
    this.#turnedAtMs = Date.now();
  }

  /** The key's hits and window end, or `undefined` for a key not held. */
  get(key: string): ClientRateLimitInfo | undefined {
    return this.current.get(key) ?? this.previous.get(key);
  }

  /** Counts one hit (starting a new window when the key's has ended) and returns the key's record. */
  increment(key: string): ClientRateLimitInfo {
    const nowMs = Date.now();
    const client = this.#client(key, nowMs);
    if (client.resetTime.getTime() <= nowMs) this.#restart(client, nowMs);
    client.totalHits++;
    return client;
  }

  /** Takes one hit back, never below zero. */
  decrement(key: string): void {
    const client = this.#client(key, Date.now());
    if (client.totalHits > 0) client.totalHits--;
  }

  /** Forgets the key. */
  resetKey(key: string): void {
    this.current.delete(key);
    this.previous.delete(key);
  }

  /** Forgets every key. */
  resetAll(): void {
    this.#current.clear();
    this.#previous.clear();
  }

  /** Empties the store (there is no timer to stop). */
  shutdown(): void {
    this.resetAll();
  }

  /** The key's record, moved to (or created in) the current generation. */
  #client(key: string, nowMs: number): Client {
    const current = this.current;
    let client = current.get(key);
    if (client !== undefined) return client;
    client = this.#previous.get(key);
    if (client === undefined) client = this.#restart({ totalHits: 0, resetTime: new Date(0) }, nowMs);
    else this.#previous.delete(key);
    current.set(key, client);
    return client;
  }

  #restart(client: Client, nowMs: number): Client {
    client.totalHits = 0;
    client.resetTime.setTime(nowMs + this.#windowMs);
    return client;
  }

  /** Turns the generations once per whole window passed since the last turn (what upstream's interval does). */
  #turn(nowMs: number): void {
    if (!(this.#windowMs > 0)) return; // upstream's interval with a window ≤ 0 never fires usefully either
    const windows = Math.floor((nowMs - this.#turnedAtMs) / this.#windowMs);
    if (windows < 1) return;
    this.#previous = windows === 1 ? this.#current : new Map<string, Client>();
    this.#current = new Map<string, Client>();
    this.#turnedAtMs += windows * this.#windowMs;
  }
}
