import { RateKitOptionError } from '@ratekit/core';
import type { ClientRateLimitInfo, Options, Store } from '../types.js';

/** The longest delay `setInterval` takes (about 24.8 days); longer windows rotate at this period and keep their open clients. */
const LONGEST_INTERVAL_MS = 2 ** 31 - 1;

/** The widest window kept, in ms (about 31,700 years): an infinite `windowMs` means "never reset". */
const LONGEST_WINDOW_MS = 1e15;

/** The default bound on the keys held across both generations. */
const DEFAULT_MAX_KEYS = 100_000;

/** Options of {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /**
   * The most keys held at once, across both generations (`previous` and
   * `current`). When a new key would go beyond it, one client is dropped
   * (and starts again from zero if it comes back): first one whose window
   * has ended, then one of `previous` (not seen this window) with the
   * fewest hits, then one of `current` with the fewest hits, and a refused
   * client (more hits than the limiter's numeric `limit`) only when every
   * held client is refused. When `limit` is a function the store cannot
   * tell refused clients: it drops ended windows first, then the client
   * with the fewest hits in either generation. express-rate-limit's store
   * has no bound.
   * @default 100_000
   */
  maxKeys?: number;
  /** The clock, Unix epoch ms. @default `Date.now()` */
  now?: () => number;
}

/**
 * What a {@link MemoryStore} uses of the validations object express-rate-limit's constructor takes
 * (`new MemoryStore(validations)`): its `windowMs` check. Any object with a `windowMs` method fits,
 * among them express-rate-limit's `Validations` and this package's `Validations`.
 */
export interface MemoryStoreValidations {
  /**
   * Checks the limiter's `windowMs`, as given to {@link MemoryStore.init}, and reports an unusable one
   * (express-rate-limit's logs `ERR_ERL_WINDOW_MS`, once). What it throws reaches the caller of `init`.
   */
  windowMs(windowMs: unknown): void;
}

/** One key's count: express-rate-limit's `Client`. */
export interface MemoryStoreClient {
  totalHits: number;
  resetTime: Date;
}

/** The synchronous operations the middleware uses on the default store, so its request path needs no promise. */
export interface SyncCounter {
  increment(key: string): ClientRateLimitInfo;
  decrement(key: string): void;
}

/** A client the last scan judged droppable: its key, its rank then, and its hits then. */
interface Candidate {
  readonly key: string;
  readonly rank: Rank;
  readonly hits: number;
}

/** How willingly a client is dropped, lowest first. */
const Rank = { Ended: 0, Previous: 1, Current: 2, Refused: 3 } as const;
type Rank = (typeof Rank)[keyof typeof Rank];

const counters = new WeakMap<MemoryStore, SyncCounter>();
const validationsOf = new WeakMap<MemoryStore, MemoryStoreValidations>();

/**
 * express-rate-limit's `MemoryStore`, with the same design: two generations
 * of clients (`{ totalHits, resetTime }` by key), `current` and `previous`.
 * A hit moves its client to `current`; an unref'd `interval` makes `current`
 * the new `previous` every `windowMs` and drops the old `previous`, whose
 * windows have all ended. A client's window starts at its first hit.
 *
 * Same contract, public fields and answers as express-rate-limit v8's
 * (`init`, `get`, `increment`, `decrement`, `resetKey`, `resetAll`,
 * `shutdown`, `localKeys: true`, `windowMs`, `interval`, `current`,
 * `previous`; the methods return promises), so code written for it, such
 * as `@express-rate-limit/cluster-memory-store`, works with it.
 *
 * One difference: at most `maxKeys` clients are held (see
 * {@link MemoryStoreOptions.maxKeys}), so a flood of new keys cannot grow
 * it without bound, nor drop a refused client while any other can go. And
 * a window longer than `setInterval` allows (about 24.8 days) is kept whole
 * rather than rotated every millisecond.
 *
 * Built either way: with ratekit's options (`new MemoryStore({ maxKeys })`),
 * or as express-rate-limit's is, with its validations object
 * (`new MemoryStore(validations)`, see {@link MemoryStoreValidations}).
 *
 * @example
 * ```ts
 * import { rateLimit, MemoryStore } from '@ratekit/express';
 * app.use(rateLimit({ windowMs: 60_000, limit: 100, store: new MemoryStore({ maxKeys: 50_000 }) }));
 * ```
 */
export class MemoryStore implements Store {
  /** The window, in ms, as given to `init`. */
  windowMs: number | undefined;
  /** The clients not seen since the last rotation. */
  previous = new Map<string, MemoryStoreClient>();
  /** The clients seen since the last rotation. */
  current = new Map<string, MemoryStoreClient>();
  /** The timer that rotates the generations every `windowMs` (unref'd); set by `init`. */
  interval: ReturnType<typeof setInterval> | undefined;
  /** Counts in one instance never affect another. */
  readonly localKeys = true;
  /** The most clients held at once, across both generations. */
  readonly maxKeys: number;

  readonly #now: () => number;
  #windowMs = 60_000;
  /** The limiter's `limit` when it is a number: a client with more hits is refused, and dropped last. */
  #limit: number | undefined;
  /** Clients to drop when the store is full, best first (checked again before each drop). */
  #candidates: Candidate[] = [];
  #next = 0;
  /** Whether the last scan chose every client that goes before one of `current`: then each new client joins the candidates. */
  #appendNew = false;

  /**
   * A store with ratekit's options: at most `maxKeys` clients, on the clock `now`.
   * @param options - `{ maxKeys?, now? }` (see {@link MemoryStoreOptions}); none: 100,000 keys on `Date.now()`
   * @throws {RateKitOptionError} (`ERR_RATEKIT_INVALID_OPTION`, `option` naming it) when `options` is not an
   *   object, `maxKeys` is not an integer ≥ 1, `now` is not a function, or a `windowMs` is given that is not
   *   a validations object's method (the window is the limiter's `windowMs`, given to `init`)
   */
  constructor(options?: MemoryStoreOptions);
  /**
   * express-rate-limit's signature: a store whose `init` hands the limiter's `windowMs` to
   * `validations.windowMs()`, as express-rate-limit's does (its check logs `ERR_ERL_WINDOW_MS` for an
   * unusable window, which the store then replaces as it always does: see `init`). Otherwise the store
   * has the defaults: 100,000 keys, `Date.now()`.
   * @param validations - an object with a `windowMs` method, such as express-rate-limit's `Validations`
   * @example
   * ```ts
   * import type { Validations } from 'express-rate-limit';
   * declare const validations: Validations;
   * const store = new MemoryStore(validations); // compiles and runs as with express-rate-limit's store
   * ```
   */
  constructor(validations?: MemoryStoreValidations);
  constructor(given: MemoryStoreOptions | MemoryStoreValidations = {}) {
    let options: MemoryStoreOptions = {};
    if (isValidations(given)) validationsOf.set(this, given);
    else options = checkedOptions(given);
    const maxKeys = options.maxKeys ?? DEFAULT_MAX_KEYS;
    if (!Number.isSafeInteger(maxKeys) || maxKeys < 1) throw new RateKitOptionError('maxKeys', 'an integer >= 1', options.maxKeys);
    this.maxKeys = maxKeys;
    this.#now = options.now ?? (() => Date.now());
    counters.set(this, {
      increment: (key) => this.#increment(String(key)),
      decrement: (key) => this.#decrement(String(key)),
    });
  }

  /**
   * Reads `windowMs` (and a numeric `limit`) from the limiter's options and
   * starts the rotation timer. An unusable `windowMs` is reported as
   * express-rate-limit does (`ERR_ERL_WINDOW_MS`, for the store the limiter
   * made itself) and replaced: below 1 ms or not a number by 1 ms, an
   * infinite one by a window that never ends in practice.
   */
  init(options: Pick<Options, 'windowMs'> & Partial<Pick<Options, 'limit'>>): void {
    this.windowMs = options.windowMs;
    validationsOf.get(this)?.windowMs(options.windowMs);
    this.#windowMs = usableWindow(options.windowMs);
    const limit = options.limit;
    this.#limit = typeof limit === 'number' && limit >= 0 ? limit : undefined;
    if (this.interval !== undefined) clearInterval(this.interval);
    this.interval = setInterval(() => this.#rotate(), Math.min(this.#windowMs, LONGEST_INTERVAL_MS));
    (this.interval as { unref?: () => unknown }).unref?.();
  }

  /**
   * The key's client (`totalHits: 0` for one decremented to zero whose
   * window is still open); `undefined` when unknown or its window has ended.
   */
  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    const client = this.current.get(key) ?? this.previous.get(key);
    if (client !== undefined && client.resetTime.getTime() <= this.#now()) return undefined;
    return client;
  }

  /** Counts a hit; starts a new window when the client's has ended. */
  async increment(key: string): Promise<ClientRateLimitInfo> {
    return this.#increment(key);
  }

  /** Takes a hit back (never below 0); an unknown key gets a client with 0 hits, as express-rate-limit's does. */
  async decrement(key: string): Promise<void> {
    this.#decrement(key);
  }

  /** Forgets a key. */
  async resetKey(key: string): Promise<void> {
    this.current.delete(key);
    this.previous.delete(key);
  }

  /** Forgets every key. */
  async resetAll(): Promise<void> {
    this.current.clear();
    this.previous.clear();
    this.#forgetCandidates();
  }

  /** Stops the rotation timer and forgets every key. */
  shutdown(): void {
    clearInterval(this.interval);
    void this.resetAll();
  }

  #increment(key: string): MemoryStoreClient {
    const client = this.#client(key);
    const now = this.#now();
    if (client.resetTime.getTime() <= now) {
      client.totalHits = 0;
      client.resetTime = new Date(now + this.#windowMs);
    }
    client.totalHits += 1;
    return client;
  }

  #decrement(key: string): void {
    const client = this.#client(key);
    if (client.totalHits > 0) client.totalHits -= 1;
  }

  /** The key's client, moved to `current`; a new one (0 hits, a window from now) when unknown. */
  #client(key: string): MemoryStoreClient {
    const seen = this.current.get(key);
    if (seen !== undefined) return seen;
    let client = this.previous.get(key);
    if (client === undefined) {
      if (this.current.size + this.previous.size >= this.maxKeys) this.#makeRoom();
      client = { totalHits: 0, resetTime: new Date(this.#now() + this.#windowMs) };
      // A new client is the next to go should the store stay full, after those already chosen.
      if (this.#appendNew) this.#candidates.push({ key, rank: Rank.Current, hits: 1 });
    } else {
      this.previous.delete(key);
    }
    this.current.set(key, client);
    return client;
  }

  /** Every `windowMs`: `current` becomes `previous`; the old `previous` goes, but for clients whose window is still open. */
  #rotate(): void {
    const older = this.previous;
    this.previous = this.current;
    this.current = new Map();
    this.#forgetCandidates();
    if (older.size === 0) return;
    // With consistent clocks every window in `older` has ended; one still open (a window longer than the
    // timer's period, or a clock that moved back) is kept, so it is never reset early.
    const now = this.#now();
    for (const [key, client] of older) {
      const end = client.resetTime.getTime();
      if (Number.isFinite(end) && end > now && !this.previous.has(key)) this.previous.set(key, client);
    }
  }

  /** Drops one client to make room for a new key. */
  #makeRoom(): void {
    const now = this.#now();
    while (this.#next < this.#candidates.length) {
      const candidate = this.#candidates[this.#next]!;
      this.#next += 1;
      const inCurrent = this.current.get(candidate.key);
      const client = inCurrent ?? this.previous.get(candidate.key);
      if (client === undefined) continue;
      const rank = this.#rank(client, inCurrent === undefined, now);
      // Dropped only if it is no harder to drop than when it was chosen (and never a refused one: see below).
      if (rank === Rank.Refused || rank > candidate.rank || (rank === candidate.rank && client.totalHits > candidate.hits)) continue;
      this.#drop(candidate.key);
      return;
    }
    this.#choose(now);
  }

  /**
   * Scans every client and keeps the best few to drop (a share of
   * `maxKeys`, so a flood of new keys costs one scan per that many keys):
   * ended windows, then `previous` by fewest hits, then `current` by fewest
   * hits. Drops the first now. Only when no client can go but refused ones
   * does it drop one of those, the one whose window ends first.
   */
  #choose(now: number): void {
    this.#forgetCandidates();
    const wanted = Math.max(1, Math.floor(this.maxKeys / 32));
    const byRank: [Candidate[], Candidate[], Candidate[]] = [[], [], []];
    let refused: { key: string; end: number } | undefined;
    for (const [generation, inPrevious] of [
      [this.previous, true],
      [this.current, false],
    ] as const) {
      for (const [key, client] of generation) {
        const rank = this.#rank(client, inPrevious, now);
        if (rank === Rank.Refused) {
          const end = client.resetTime.getTime();
          if (refused === undefined || end < refused.end) refused = { key, end };
        } else {
          byRank[rank].push({ key, rank, hits: client.totalHits });
        }
      }
    }
    const chosen: Candidate[] = [];
    for (const group of byRank) {
      if (chosen.length >= wanted) break;
      if (group.length > wanted - chosen.length) group.sort((a, b) => a.hits - b.hits);
      for (const candidate of group) {
        if (chosen.length >= wanted) break;
        chosen.push(candidate);
      }
    }
    // New clients are worth dropping next only if no client that goes before them was left out.
    this.#appendNew = chosen.length >= byRank[Rank.Ended].length + byRank[Rank.Previous].length;
    if (chosen.length === 0) {
      if (refused !== undefined) this.#drop(refused.key);
      return;
    }
    this.#drop(chosen[0]!.key);
    this.#candidates = chosen;
    this.#next = 1;
  }

  #rank(client: MemoryStoreClient, inPrevious: boolean, now: number): Rank {
    if (client.resetTime.getTime() <= now) return Rank.Ended;
    // Without a numeric limit a refused client is not known: both generations make one group, fewest
    // hits first (`previous` first on a tie), so the clients with the most hits go last.
    if (this.#limit === undefined) return Rank.Previous;
    if (client.totalHits > this.#limit) return Rank.Refused;
    return inPrevious ? Rank.Previous : Rank.Current;
  }

  #drop(key: string): void {
    if (!this.current.delete(key)) this.previous.delete(key);
  }

  #forgetCandidates(): void {
    this.#candidates = [];
    this.#next = 0;
    this.#appendNew = false;
  }
}

/** The synchronous counter behind a {@link MemoryStore}, for the middleware; `undefined` for any other store. */
export function syncCounter(store: unknown): SyncCounter | undefined {
  return store instanceof MemoryStore ? counters.get(store) : undefined;
}

/** Lets `init` report an unusable `windowMs`, as express-rate-limit does for the store it makes itself. */
export function attachValidations(store: MemoryStore, validations: MemoryStoreValidations): void {
  validationsOf.set(store, validations);
}

/** express-rate-limit's constructor argument: an object whose `windowMs` is a method (an options object has no `windowMs`). */
function isValidations(given: unknown): given is MemoryStoreValidations {
  return typeof given === 'object' && given !== null && typeof (given as { windowMs?: unknown }).windowMs === 'function';
}

/** `given` as {@link MemoryStoreOptions}. @throws {RateKitOptionError} naming what is wrong (`options`, `windowMs` or `now`) */
function checkedOptions(given: unknown): MemoryStoreOptions {
  if (typeof given !== 'object' || given === null || Array.isArray(given)) {
    throw new RateKitOptionError('options', "an options object ({ maxKeys?, now? }) or express-rate-limit's validations object", given);
  }
  const { windowMs, now } = given as { windowMs?: unknown; now?: unknown };
  if (windowMs !== undefined) throw new RateKitOptionError('windowMs', "absent: the store takes the limiter's windowMs in init (a validations object's windowMs is a method)", windowMs);
  if (now !== undefined && typeof now !== 'function') throw new RateKitOptionError('now', 'a function returning Unix epoch milliseconds', now);
  return given;
}

function usableWindow(given: unknown): number {
  // express-rate-limit's store hands windowMs to setInterval, which takes a numeric string as its number.
  const windowMs = typeof given === 'string' && given.trim() !== '' ? Number(given) : given;
  if (typeof windowMs !== 'number' || Number.isNaN(windowMs) || windowMs < 1) return 1;
  return Math.min(windowMs, LONGEST_WINDOW_MS);
}
