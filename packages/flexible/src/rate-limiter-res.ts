/**
 * The result of every rate-limiter-flexible call, and the value a refusal
 * rejects with. It is a real class because users tell a refusal from a store
 * failure with `instanceof RateLimiterRes` (rlf README, PR #42), so every
 * class in this package creates its results through this one constructor.
 *
 * The four fields are accessors over `_`-prefixed fields, as in rlf
 * (`lib/RateLimiterRes.js`): that is what `console.log` used to show (#238),
 * so `toJSON`, `toString` and `util.inspect` show the plain four fields.
 *
 * @module
 */

/** The plain shape of a {@link RateLimiterRes}; every field optional, as in rlf's `types.d.ts`. */
export interface IRateLimiterRes {
  msBeforeNext?: number;
  remainingPoints?: number;
  consumedPoints?: number;
  isFirstInDuration?: boolean;
}

/** The four fields as `toJSON()` returns them. */
export interface RateLimiterResJSON {
  remainingPoints: number;
  msBeforeNext: number;
  consumedPoints: number;
  isFirstInDuration: boolean;
}

const inspectSymbol = Symbol.for('nodejs.util.inspect.custom');

/**
 * A limiter's answer for one key.
 *
 * - `remainingPoints`: points left in the current duration, never below 0;
 * - `msBeforeNext`: milliseconds until the key's window (or block) ends; -1 when it never expires;
 * - `consumedPoints`: points consumed in the current duration, this call's included;
 * - `isFirstInDuration`: true when this call started the window.
 *
 * Missing constructor arguments default to 0, 0, 0 and false (rlf's defaults); an explicit `null` is kept, as rlf keeps it.
 *
 * @example
 * ```ts
 * try {
 *   await limiter.consume(ip);
 * } catch (rejection) {
 *   if (rejection instanceof RateLimiterRes) res.set('Retry-After', String(Math.ceil(rejection.msBeforeNext / 1000)));
 *   else throw rejection; // a store failure: an Error
 * }
 * ```
 */
export class RateLimiterRes {
  _remainingPoints = 0;
  _msBeforeNext = 0;
  _consumedPoints = 0;
  _isFirstInDuration = false;

  constructor(remainingPoints?: number, msBeforeNext?: number, consumedPoints?: number, isFirstInDuration?: boolean) {
    // Only a missing argument takes the default: rlf keeps an explicit null (`new RateLimiterRes(null)` reads null).
    this.remainingPoints = remainingPoints === undefined ? 0 : remainingPoints;
    this.msBeforeNext = msBeforeNext === undefined ? 0 : msBeforeNext;
    this.consumedPoints = consumedPoints === undefined ? 0 : consumedPoints;
    this.isFirstInDuration = isFirstInDuration === undefined ? false : isFirstInDuration;
  }

  get msBeforeNext(): number {
    return this._msBeforeNext;
  }

  set msBeforeNext(ms: number) {
    this._msBeforeNext = ms;
  }

  get remainingPoints(): number {
    return this._remainingPoints;
  }

  set remainingPoints(points: number) {
    this._remainingPoints = points;
  }

  get consumedPoints(): number {
    return this._consumedPoints;
  }

  set consumedPoints(points: number) {
    this._consumedPoints = points;
  }

  get isFirstInDuration(): boolean {
    return this._isFirstInDuration;
  }

  /** Cast with `Boolean`, as rlf does. */
  set isFirstInDuration(value: boolean) {
    this._isFirstInDuration = Boolean(value);
  }

  /** The plain four fields. */
  toJSON(): RateLimiterResJSON {
    return {
      remainingPoints: this.remainingPoints,
      msBeforeNext: this.msBeforeNext,
      consumedPoints: this.consumedPoints,
      isFirstInDuration: this.isFirstInDuration,
    };
  }

  /** `JSON.stringify` of the four fields. */
  toString(): string {
    return JSON.stringify(this.toJSON());
  }

  /** What `console.log` and `util.inspect` show: the four fields. */
  [inspectSymbol](): RateLimiterResJSON {
    return this.toJSON();
  }
}
