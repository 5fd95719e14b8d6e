/**
 * RateLimiterAbstract: the options every rate-limiter-flexible limiter shares,
 * their validation, and the key scheme. Options are accessors, so they can be
 * changed at runtime (`limiter.points = 50`), and each assignment is checked
 * with rlf's own message, as rlf 11.4's `lib/RateLimiterAbstract.js` does.
 *
 * The seven operations throw until a subclass implements them, with rlf's
 * message ("You have to implement the method 'consume'!").
 *
 * @module
 */
import type { IRateLimiterOptions, RateLimiterCallOptions } from './options.js';
import type { RateLimiterRes } from './rate-limiter-res.js';

/** rlf's default key prefix. */
export const DEFAULT_KEY_PREFIX = 'rlflx';

/**
 * The base class of every limiter in this package.
 *
 * Validation, at construction and on every assignment (rlf's messages, plain `Error`s):
 * - `points`: finite number, else "points must be set and must be a finite number";
 * - `duration`: finite number ≥ 0 (seconds), else "duration must be set and must be a finite, non-negative number";
 * - `keyPrefix`: string, default `'rlflx'`, else "keyPrefix must be string".
 *
 * `blockDuration` (seconds, default 0) and `execEvenlyMinDelayMs` are not validated (as in rlf);
 * `execEvenly` is cast with `Boolean`.
 *
 * @example
 * ```ts
 * class MyLimiter extends RateLimiterAbstract { consume(key) { ... } }
 * ```
 */
export class RateLimiterAbstract {
  _points!: number;
  _duration!: number;
  _blockDuration!: number;
  _execEvenly!: boolean;
  _execEvenlyMinDelayMs: number | undefined;
  _keyPrefix!: string;

  /** @throws {Error} with rlf's message when `points`, `duration` or `keyPrefix` is invalid. */
  constructor(opts: IRateLimiterOptions = {} as IRateLimiterOptions) {
    this.points = opts.points;
    this.duration = opts.duration;
    this.blockDuration = opts.blockDuration;
    this.execEvenly = opts.execEvenly;
    this.execEvenlyMinDelayMs = opts.execEvenlyMinDelayMs;
    this.keyPrefix = opts.keyPrefix;
  }

  /** Points a key may consume per duration. */
  get points(): number {
    return this._points;
  }

  set points(value: number) {
    if (!Number.isFinite(value)) throw new Error('points must be set and must be a finite number');
    this._points = value;
  }

  /** Seconds of a window; 0 means the key never expires. */
  get duration(): number {
    return this._duration;
  }

  set duration(value: number) {
    if (!(typeof value === 'number' && Number.isFinite(value) && value >= 0)) {
      throw new Error('duration must be set and must be a finite, non-negative number');
    }
    this._duration = value;
  }

  /** `duration` in milliseconds. */
  get msDuration(): number {
    return this.duration * 1000;
  }

  /** Seconds a key is blocked once it consumes more than `points`. Default 0. */
  get blockDuration(): number {
    return this._blockDuration;
  }

  set blockDuration(value: number | undefined) {
    this._blockDuration = value === undefined ? 0 : value;
  }

  /** `blockDuration` in milliseconds. */
  get msBlockDuration(): number {
    return this.blockDuration * 1000;
  }

  /** Spread allowed actions over the duration by delaying them. Default false. */
  get execEvenly(): boolean {
    return this._execEvenly;
  }

  set execEvenly(value: boolean | undefined) {
    this._execEvenly = value === undefined ? false : Boolean(value);
  }

  /**
   * The smallest execEvenly delay, in milliseconds. Unset, it follows `points`
   * and `duration`: `ceil(duration * 1000 / points)`, or 0 when points ≤ 0 (rlf 11.4).
   */
  get execEvenlyMinDelayMs(): number {
    return this._execEvenlyMinDelayMs === undefined ? this._getExecEvenlyMinDelayMsDefault() : this._execEvenlyMinDelayMs;
  }

  set execEvenlyMinDelayMs(value: number | undefined) {
    this._execEvenlyMinDelayMs = value;
  }

  _getExecEvenlyMinDelayMsDefault(): number {
    return this.points > 0 ? Math.ceil(this.msDuration / this.points) : 0;
  }

  /** Prefix of stored keys; `''` means none. Default `'rlflx'`. */
  get keyPrefix(): string {
    return this._keyPrefix;
  }

  set keyPrefix(value: string | undefined) {
    const prefix: unknown = value ?? DEFAULT_KEY_PREFIX;
    if (typeof prefix !== 'string') throw new Error('keyPrefix must be string');
    this._keyPrefix = prefix;
  }

  /** Seconds of a new window for this call: `options.customDuration` when ≥ 0, else `duration`. */
  _getKeySecDuration(options: RateLimiterCallOptions | null = {}): number {
    // rlf's loose comparison, kept: a numeric string counts, as in rlf.
    const custom = (options === null ? undefined : options.customDuration) as number;
    return custom >= 0 ? custom : this.duration;
  }

  /** The stored key: `keyPrefix:key`, or the key itself when the prefix is `''`. */
  getKey(key: string | number): string {
    return this.keyPrefix.length > 0 ? `${this.keyPrefix}:${key}` : (key as string);
  }

  /** The user's key back from a stored key. */
  parseKey(rlKey: string): string {
    return this.keyPrefix.length > 0 ? rlKey.substring(this.keyPrefix.length + 1) : rlKey;
  }

  /** Consumes points; rejects with a RateLimiterRes when more than `points` are consumed in the window. */
  consume(_key: string | number, _pointsToConsume?: number, _options?: RateLimiterCallOptions): Promise<RateLimiterRes> {
    throw new Error("You have to implement the method 'consume'!");
  }

  /** Adds points without checking the limit. */
  penalty(_key: string | number, _points?: number, _options?: RateLimiterCallOptions): Promise<RateLimiterRes> {
    throw new Error("You have to implement the method 'penalty'!");
  }

  /** Gives points back without checking the limit. */
  reward(_key: string | number, _points?: number, _options?: RateLimiterCallOptions): Promise<RateLimiterRes> {
    throw new Error("You have to implement the method 'reward'!");
  }

  /** The key's state, or null when it has none. */
  get(_key: string | number, _options?: RateLimiterCallOptions): Promise<RateLimiterRes | null> {
    throw new Error("You have to implement the method 'get'!");
  }

  /** Sets the key's consumed points for `secDuration` seconds (0 = forever; missing or negative = `duration`). */
  set(_key: string | number, _points: number, _secDuration: number, _options?: RateLimiterCallOptions): Promise<RateLimiterRes> {
    throw new Error("You have to implement the method 'set'!");
  }

  /** Blocks the key for `secDuration` seconds (0 = forever). */
  block(_key: string | number, _secDuration: number, _options?: RateLimiterCallOptions): Promise<RateLimiterRes> {
    throw new Error("You have to implement the method 'block'!");
  }

  /** Deletes the key's state; resolves true when there was one. */
  delete(_key: string | number, _options?: RateLimiterCallOptions): Promise<boolean> {
    throw new Error("You have to implement the method 'delete'!");
  }
}
