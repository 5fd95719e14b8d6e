/**
 * RateLimiterStoreAbstract: rlf's documented way to add a store
 * (`lib/RateLimiterStoreAbstract.js`). A store subclass implements four
 * protected hooks, with rlf's signatures and meaning:
 *
 * - `_upsert(rlKey, points, msDuration, forceExpire = false, options = {})`:
 *   adds `points` to the key's count; with `forceExpire`, sets the count to
 *   `points` and the expiry to `msDuration` from now (0 = never expires).
 *   A missing or expired key starts at `points` with expiry `msDuration`.
 *   Resolves with the store's raw result.
 * - `_get(rlKey, options = {})`: the raw result, or null when the key is missing.
 * - `_delete(rlKey, options = {})`: true when a key was deleted.
 * - `_getRateLimiterRes(rlKey, changedPoints, result)`: a RateLimiterRes from
 *   a raw result (consumedPoints, msBeforeNext (-1 = never expires),
 *   isFirstInDuration = consumed === changedPoints). The abstract then sets
 *   remainingPoints to max(points - consumed, 0).
 *
 * The abstract owns the rest: consume / penalty / reward / get / set / block
 * / delete; the block by `blockDuration` (once, on the consume that first
 * crosses the threshold, by an upsert with forceExpire); execEvenly's delay;
 * `customDuration`; the in-process refusal of `inMemoryBlockOnConsumed`; the
 * insurance fallback (RateLimiterInsuredAbstract).
 *
 * @module
 */
import { InMemoryBlockedKeys } from './in-memory-blocked-keys.js';
import { RateLimiterInsuredAbstract } from './insured-abstract.js';
import type { IRateLimiterStoreOptions, RateLimiterCallOptions } from './options.js';
import { RateLimiterRes } from './rate-limiter-res.js';

type Resolve = (value: unknown) => void;
type Reject = (reason: unknown) => void;

/** rlf's `parseInt(value)` for the block options: a falsy value is 0. */
function toInt(value: unknown): number {
  return value ? parseInt(value as string, 10) : 0;
}

/**
 * The base of store limiters (Redis, Memcache, Postgres, or your own).
 *
 * Validation (rlf's messages, plain `Error`s), on top of RateLimiterAbstract's:
 * - `blockOnConsumed` > 0 and < `points`: 'blockOnConsumed option must be greater or equal "points" option';
 * - `inMemoryBlockOnConsumed` > 0 and < `points`: 'inMemoryBlockOnConsumed option must be greater or equal "points" option';
 * - `inMemoryBlockDuration` > 0 without `inMemoryBlockOnConsumed`: 'inMemoryBlockOnConsumed option must be set up';
 * - `client = undefined`: 'storeClient is not set'.
 *
 * @example
 * ```ts
 * class MyStore extends RateLimiterStoreAbstract {
 *   _upsert(rlKey, points, msDuration, forceExpire = false) { ... }
 *   _get(rlKey) { ... }
 *   _delete(rlKey) { ... }
 *   _getRateLimiterRes(rlKey, changedPoints, result) { return new RateLimiterRes(0, result.ms, result.points, result.points === changedPoints); }
 * }
 * ```
 */
export class RateLimiterStoreAbstract extends RateLimiterInsuredAbstract {
  _blockOnConsumed!: number;
  _inMemoryBlockOnConsumed!: number;
  _inMemoryBlockDuration!: number;
  /** Keys refused in-process, as in rlf (its tests read `_inMemoryBlockedKeys._keys`). */
  _inMemoryBlockedKeys: InMemoryBlockedKeys;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each store has its own client type
  _client: any;

  constructor(opts: IRateLimiterStoreOptions = {} as IRateLimiterStoreOptions) {
    super(opts);
    this.blockOnConsumed = opts.blockOnConsumed as number;
    this.inMemoryBlockOnConsumed = opts.inMemoryBlockOnConsumed as number;
    this.inMemoryBlockDuration = opts.inMemoryBlockDuration as number;
    this._inMemoryBlockedKeys = new InMemoryBlockedKeys();
  }

  /** The store's client (`storeClient`). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each store has its own client type
  get client(): any {
    // eslint-disable-next-line @typescript-eslint/no-unsafe-return -- the client as given
    return this._client;
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each store has its own client type
  set client(value: any) {
    if (value === undefined) throw new Error('storeClient is not set');
    // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- the client as given
    this._client = value;
  }

  /** Consumed points at which the stored key is blocked for `blockDuration` (rlf 11.4); 0 = on passing `points`. */
  get blockOnConsumed(): number {
    return this._blockOnConsumed;
  }

  set blockOnConsumed(value: number) {
    this._blockOnConsumed = toInt(value);
    if (this._blockOnConsumed > 0 && this.points > this._blockOnConsumed) {
      throw new Error('blockOnConsumed option must be greater or equal "points" option');
    }
  }

  /** Consumed points at which the key is refused in-process. 0 = off. */
  get inMemoryBlockOnConsumed(): number {
    return this._inMemoryBlockOnConsumed;
  }

  set inMemoryBlockOnConsumed(value: number) {
    this._inMemoryBlockOnConsumed = toInt(value);
    if (this._inMemoryBlockOnConsumed > 0 && this.points > this._inMemoryBlockOnConsumed) {
      throw new Error('inMemoryBlockOnConsumed option must be greater or equal "points" option');
    }
  }

  /** Seconds of the in-process refusal; 0 = until the key's window ends. */
  get inMemoryBlockDuration(): number {
    return this._inMemoryBlockDuration;
  }

  set inMemoryBlockDuration(value: number) {
    this._inMemoryBlockDuration = toInt(value);
    if (this._inMemoryBlockDuration > 0 && this.inMemoryBlockOnConsumed === 0) {
      throw new Error('inMemoryBlockOnConsumed option must be set up');
    }
  }

  get msInMemoryBlockDuration(): number {
    return this._inMemoryBlockDuration * 1000;
  }

  _isBlockOnConsumedEnabled(): boolean {
    return this.blockOnConsumed > 0 && this.blockOnConsumed > this.points;
  }

  /** True for the consume that crossed the block threshold (only that one blocks, as in rlf). */
  _crossedBlockThreshold(consumedPoints: number, changedPoints: number): boolean {
    if (!this._isBlockOnConsumedEnabled()) {
      return consumedPoints > this.points && consumedPoints <= this.points + changedPoints;
    }
    return consumedPoints >= this.blockOnConsumed && consumedPoints - changedPoints < this.blockOnConsumed;
  }

  _getBlockedPoints(): number {
    return this._isBlockOnConsumedEnabled() ? this.blockOnConsumed : this.points + 1;
  }

  /** Milliseconds left of `rlKey`'s in-process refusal; 0 when none. */
  getInMemoryBlockMsBeforeExpire(rlKey: string): number {
    return this.inMemoryBlockOnConsumed > 0 ? this._inMemoryBlockedKeys.msBeforeExpire(rlKey) : 0;
  }

  /** A RateLimiterRes from a store result, with remainingPoints = max(points - consumed, 0). */
  _resFromStore(rlKey: string, changedPoints: number, storeResult: unknown): RateLimiterRes {
    const res = this._getRateLimiterRes(rlKey, changedPoints, storeResult);
    res.remainingPoints = Math.max(this.points - res.consumedPoints, 0);
    return res;
  }

  /**
   * Decides a consume from the store's answer: refuse (blocking the key once by
   * `blockDuration`), refuse in-process from now on (`inMemoryBlockOnConsumed`),
   * delay (execEvenly), or resolve. rlf's `_afterConsume`.
   */
  _afterConsume(resolve: Resolve, reject: Reject, rlKey: string, changedPoints: number, storeResult: unknown, options: RateLimiterCallOptions = {}): void {
    const res = this._resFromStore(rlKey, changedPoints, storeResult);

    if (this.inMemoryBlockOnConsumed > 0 && !(this.inMemoryBlockDuration > 0) && res.consumedPoints >= this.inMemoryBlockOnConsumed) {
      // Refused in-process until the window ends; this call is still decided by the count.
      this._inMemoryBlockedKeys.addMs(rlKey, res.msBeforeNext);
      if (res.consumedPoints > this.points) reject(res);
      else resolve(res);
      return;
    }

    if (res.consumedPoints > this.points) {
      let blocked: Promise<unknown> = Promise.resolve();
      if (this.blockDuration > 0 && this._crossedBlockThreshold(res.consumedPoints, changedPoints)) {
        res.msBeforeNext = this.msBlockDuration;
        blocked = this._block(rlKey, res.consumedPoints, this.msBlockDuration, options);
      }
      if (this.inMemoryBlockOnConsumed > 0 && res.consumedPoints >= this.inMemoryBlockOnConsumed) {
        this._inMemoryBlockedKeys.add(rlKey, this.inMemoryBlockDuration);
        res.msBeforeNext = this.msInMemoryBlockDuration;
      }
      blocked.then(() => reject(res), reject);
      return;
    }

    if (this.execEvenly && this.points > 0 && res.msBeforeNext > 0 && !res.isFirstInDuration) {
      const delayMs = execEvenlyDelayMs(res, this.execEvenlyMinDelayMs);
      res.msBeforeNext = Math.max(res.msBeforeNext - delayMs, 0);
      setTimeout(resolve, delayMs, res);
      return;
    }

    resolve(res);
  }

  override _consume(key: string | number, pointsToConsume = 1, options: RateLimiterCallOptions = {}): Promise<RateLimiterRes> {
    return new Promise((resolve, reject) => {
      const rlKey = this.getKey(key);
      const inMemoryBlockMs = this.getInMemoryBlockMsBeforeExpire(rlKey);
      if (inMemoryBlockMs > 0) {
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- a refusal rejects with a RateLimiterRes (rlf's contract)
        reject(new RateLimiterRes(0, inMemoryBlockMs));
        return;
      }
      // A store reply the hooks cannot read (`_getRateLimiterRes` throws) rejects the consume, which would otherwise never settle.
      this._upsert(rlKey, pointsToConsume, this._getKeySecDuration(options) * 1000, false, options)
        .then((result) => this._afterConsume(resolve as Resolve, reject, rlKey, pointsToConsume, result, options))
        .catch(reject);
    });
  }

  override _penalty(key: string | number, points = 1, options: RateLimiterCallOptions = {}): Promise<RateLimiterRes> {
    const rlKey = this.getKey(key);
    return this._upsert(rlKey, points, this._getKeySecDuration(options) * 1000, false, options).then((result) => this._resFromStore(rlKey, points, result));
  }

  override _reward(key: string | number, points = 1, options: RateLimiterCallOptions = {}): Promise<RateLimiterRes> {
    const rlKey = this.getKey(key);
    return this._upsert(rlKey, -points, this._getKeySecDuration(options) * 1000, false, options).then((result) => this._resFromStore(rlKey, -points, result));
  }

  /** Blocks the key for `secDuration` seconds (0 = forever): sets it to `points + 1` (or `blockOnConsumed`). */
  override block(key: string | number, secDuration: number, options: RateLimiterCallOptions = {}): Promise<RateLimiterRes> {
    return this._block(this.getKey(key), this._getBlockedPoints(), secDuration * 1000, options);
  }

  /** Sets the key to `points` for `secDuration` seconds (0 = forever; missing or negative = `duration`). */
  override set(key: string | number, points: number, secDuration: number, options: RateLimiterCallOptions = {}): Promise<RateLimiterRes> {
    const msDuration = (secDuration >= 0 ? secDuration : this.duration) * 1000;
    return this._set(this.getKey(key), points, msDuration, options);
  }

  /** The key's state, or null. A store failure goes to the insurance limiter. The in-process refusal is not consulted (as in rlf). */
  override get(key: string | number, options: RateLimiterCallOptions = {}): Promise<RateLimiterRes | null> {
    const rlKey = this.getKey(key);
    return new Promise((resolve, reject) => {
      this._get(rlKey, options).then(
        (result) => resolve(result === null || result === undefined ? null : this._resFromStore(rlKey, 0, result)),
        (err: unknown) => this._handleError(err, 'get', resolve as Resolve, reject, [key, options]),
      );
    });
  }

  /** Deletes the key in the store and its in-process refusal. */
  override delete(key: string | number, options: RateLimiterCallOptions = {}): Promise<boolean> {
    const rlKey = this.getKey(key);
    return new Promise((resolve, reject) => {
      this._delete(rlKey, options).then(
        (deleted) => {
          this._inMemoryBlockedKeys.delete(rlKey);
          resolve(deleted);
        },
        (err: unknown) => this._handleError(err, 'delete', resolve as Resolve, reject, [key, options]),
      );
    });
  }

  /** Forgets every in-process refusal (the stored counts stay). */
  deleteInMemoryBlockedAll(): void {
    this._inMemoryBlockedKeys.delete();
  }

  override _block(rlKey: string, initPoints: number, msDuration: number, options: RateLimiterCallOptions = {}): Promise<RateLimiterRes> {
    return new Promise((resolve, reject) => {
      this._upsert(rlKey, initPoints, msDuration, true, options).then(
        () => resolve(new RateLimiterRes(0, msDuration > 0 ? msDuration : -1, initPoints)),
        (err: unknown) => this._handleError(err, 'block', resolve as Resolve, reject, [this.parseKey(rlKey), msDuration / 1000, options]),
      );
    });
  }

  override _set(rlKey: string, points: number, msDuration: number, options: RateLimiterCallOptions = {}): Promise<RateLimiterRes> {
    return new Promise((resolve, reject) => {
      this._upsert(rlKey, points, msDuration, true, options).then(
        () => resolve(new RateLimiterRes(0, msDuration > 0 ? msDuration : -1, points)),
        (err: unknown) => this._handleError(err, 'set', resolve as Resolve, reject, [this.parseKey(rlKey), points, msDuration / 1000, options]),
      );
    });
  }

  /** Hook: a RateLimiterRes from a raw store result. */
  _getRateLimiterRes(_rlKey: string, _changedPoints: number, _storeResult: unknown): RateLimiterRes {
    throw new Error("You have to implement the method '_getRateLimiterRes'!");
  }

  /** Hook: the raw result for `rlKey`, or null. */
  override _get(_rlKey: string, _options: RateLimiterCallOptions = {}): Promise<unknown> {
    throw new Error("You have to implement the method '_get'!");
  }

  /** Hook: deletes `rlKey`; true when it existed. */
  override _delete(_rlKey: string, _options: RateLimiterCallOptions = {}): Promise<boolean> {
    throw new Error("You have to implement the method '_delete'!");
  }

  /** Hook: adds `points` (or, with forceExpire, sets them and the expiry); see the module's doc. */
  _upsert(_rlKey: string, _points: number, _msDuration: number, _forceExpire = false, _options: RateLimiterCallOptions = {}): Promise<unknown> {
    throw new Error("You have to implement the method '_upsert'!");
  }
}

/**
 * execEvenly's delay (rlf's formula): spread the remaining points over the
 * time left, `ceil(msBeforeNext / (remainingPoints + 2))`; when that is below
 * `minDelayMs`, `consumedPoints * minDelayMs` instead.
 */
export function execEvenlyDelayMs(res: RateLimiterRes, minDelayMs: number): number {
  const delayMs = Math.ceil(res.msBeforeNext / (res.remainingPoints + 2));
  return delayMs < minDelayMs ? res.consumedPoints * minDelayMs : delayMs;
}
