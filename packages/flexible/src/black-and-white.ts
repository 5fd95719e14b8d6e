/**
 * RLWrapperBlackAndWhite: a limiter with a black list and a white list, as
 * rlf's `lib/RLWrapperBlackAndWhite.js`. A white-listed key is never limited
 * (every call resolves at once with unlimited points); a black-listed key is
 * always refused on `consume` (and answered as blocked by the other calls);
 * any other key goes to the wrapped limiter. The white list wins when a key
 * is on both. `delete` always goes to the wrapped limiter.
 *
 * With `runActionAnyway`, a listed key's call is still made on the wrapped
 * limiter (its answer and errors are dropped), so its counts go on as if the
 * key were not listed; `get` then answers the wrapped limiter's record.
 *
 * @module
 */
import { RateLimiterCompatibleAbstract } from './compatible-abstract.js';
import type { IRLWrapperBlackAndWhiteOptions, RateLimiterCallOptions, RateLimiterLike } from './options.js';
import { RateLimiterRes } from './rate-limiter-res.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- rlf types the predicates so
type KeyPredicate = (key: any) => boolean;

type Action = 'consume' | 'penalty' | 'reward' | 'get' | 'set' | 'block';

/**
 * Wraps a limiter with black and white lists (arrays of keys, compared with
 * `===`) and predicates (`isBlackListed(key)`, `isWhiteListed(key)`).
 *
 * - white-listed: resolves with `RateLimiterRes(Number.MAX_SAFE_INTEGER, 0, 0, false)`;
 * - black-listed: `consume` rejects with `RateLimiterRes(0, Number.MAX_SAFE_INTEGER, 0, false)`,
 *   the other calls resolve with it.
 *
 * @throws {Error} "limiter is not set" when `opts.limiter` is missing;
 *   "isBlackListed must be function" / "isWhiteListed must be function" (rlf's messages).
 *
 * @example
 * ```ts
 * const limiter = new RLWrapperBlackAndWhite({
 *   limiter: new RateLimiterMemory({ points: 10, duration: 1 }),
 *   whiteList: ['127.0.0.1'],
 *   isBlackListed: (ip) => bannedIps.has(ip),
 * });
 * await limiter.consume(ip);
 * ```
 */
export class RLWrapperBlackAndWhite extends RateLimiterCompatibleAbstract {
  _limiter!: RateLimiterLike;
  _blackList!: string[] | number[];
  _whiteList!: string[] | number[];
  _isBlackListed!: KeyPredicate;
  _isWhiteListed!: KeyPredicate;
  _runActionAnyway!: boolean;

  constructor(opts: IRLWrapperBlackAndWhiteOptions = {} as IRLWrapperBlackAndWhiteOptions) {
    super();
    this.limiter = opts.limiter;
    this.blackList = opts.blackList as string[] | number[];
    this.whiteList = opts.whiteList as string[] | number[];
    // Read as values: rlf keeps the caller's functions as they are (and calls them on the wrapper).
    const { isBlackListed, isWhiteListed } = opts as { isBlackListed?: unknown; isWhiteListed?: unknown };
    this.isBlackListed = isBlackListed as KeyPredicate;
    this.isWhiteListed = isWhiteListed as KeyPredicate;
    this.runActionAnyway = opts.runActionAnyway as boolean;
  }

  /** The wrapped limiter. */
  get limiter(): RateLimiterLike {
    return this._limiter;
  }

  set limiter(value: RateLimiterLike) {
    if (typeof value === 'undefined') throw new Error('limiter is not set');
    this._limiter = value;
  }

  /** The wrapped limiter's keyPrefix. */
  override get keyPrefix(): string {
    return this.limiter.keyPrefix;
  }

  /** The wrapped limiter's blockDuration (seconds), read and written through. */
  override get blockDuration(): number {
    return this.limiter.blockDuration;
  }

  override set blockDuration(value: number) {
    this.limiter.blockDuration = value;
  }

  /** The wrapped limiter's execEvenly, read and written through. */
  override get execEvenly(): boolean {
    return this.limiter.execEvenly;
  }

  override set execEvenly(value: boolean) {
    this.limiter.execEvenly = value;
  }

  /** Whether a listed key's call is still made on the wrapped limiter. Default false. */
  get runActionAnyway(): boolean {
    return this._runActionAnyway;
  }

  set runActionAnyway(value: boolean) {
    this._runActionAnyway = typeof value === 'undefined' ? false : value;
  }

  /** Black-listed keys; anything but an array means none. */
  get blackList(): string[] | number[] {
    return this._blackList;
  }

  set blackList(value: string[] | number[]) {
    this._blackList = Array.isArray(value) ? value : [];
  }

  /** A predicate black-listing keys; default: none. */
  get isBlackListed(): KeyPredicate {
    return this._isBlackListed;
  }

  set isBlackListed(func: KeyPredicate) {
    this._isBlackListed = predicate(func, 'isBlackListed');
  }

  /** White-listed keys; anything but an array means none. */
  get whiteList(): string[] | number[] {
    return this._whiteList;
  }

  set whiteList(value: string[] | number[]) {
    this._whiteList = Array.isArray(value) ? value : [];
  }

  /** A predicate white-listing keys; default: none. */
  get isWhiteListed(): KeyPredicate {
    return this._isWhiteListed;
  }

  set isWhiteListed(func: KeyPredicate) {
    this._isWhiteListed = predicate(func, 'isWhiteListed');
  }

  /** True when `key` is in `blackList` or `isBlackListed(key)`. */
  isBlackListedSomewhere(key: string | number): boolean {
    return (this.blackList as Array<string | number>).indexOf(key) >= 0 || this.isBlackListed(key);
  }

  /** True when `key` is in `whiteList` or `isWhiteListed(key)`. */
  isWhiteListedSomewhere(key: string | number): boolean {
    return (this.whiteList as Array<string | number>).indexOf(key) >= 0 || this.isWhiteListed(key);
  }

  /** A black-listed key's answer: no points left, for `Number.MAX_SAFE_INTEGER` ms. */
  getBlackRes(): RateLimiterRes {
    return new RateLimiterRes(0, Number.MAX_SAFE_INTEGER, 0, false);
  }

  /** A white-listed key's answer: `Number.MAX_SAFE_INTEGER` points left. */
  getWhiteRes(): RateLimiterRes {
    return new RateLimiterRes(Number.MAX_SAFE_INTEGER, 0, 0, false);
  }

  rejectBlack(): Promise<never> {
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- rlf's contract: a refusal rejects with a RateLimiterRes
    return Promise.reject(this.getBlackRes());
  }

  resolveBlack(): Promise<RateLimiterRes> {
    return Promise.resolve(this.getBlackRes());
  }

  resolveWhite(): Promise<RateLimiterRes> {
    return Promise.resolve(this.getWhiteRes());
  }

  /** Answers a listed key itself (and still calls the limiter with runActionAnyway), else calls the limiter. */
  _execAction(action: Action, key: string | number, args: unknown[], rejectOnBlack = false): Promise<RateLimiterRes | null> {
    let listed: Promise<RateLimiterRes> | undefined;
    if (this.isWhiteListedSomewhere(key)) listed = this.resolveWhite();
    else if (this.isBlackListedSomewhere(key)) listed = rejectOnBlack ? this.rejectBlack() : this.resolveBlack();

    const call = (): Promise<RateLimiterRes | null> => (this.limiter[action] as (...params: unknown[]) => Promise<RateLimiterRes | null>).call(this.limiter, key, ...args);
    if (listed === undefined) return call();
    if (this.runActionAnyway) call().catch(() => undefined);
    return listed;
  }

  override consume(key: string | number, pointsToConsume = 1, options: RateLimiterCallOptions = {}): Promise<RateLimiterRes> {
    return this._execAction('consume', key, [pointsToConsume, options], true) as Promise<RateLimiterRes>;
  }

  override block(key: string | number, secDuration: number, options: RateLimiterCallOptions = {}): Promise<RateLimiterRes> {
    return this._execAction('block', key, [secDuration, options]) as Promise<RateLimiterRes>;
  }

  override penalty(key: string | number, points = 1, options: RateLimiterCallOptions = {}): Promise<RateLimiterRes> {
    return this._execAction('penalty', key, [points, options]) as Promise<RateLimiterRes>;
  }

  override reward(key: string | number, points = 1, options: RateLimiterCallOptions = {}): Promise<RateLimiterRes> {
    return this._execAction('reward', key, [points, options]) as Promise<RateLimiterRes>;
  }

  /** The wrapped limiter's record; for a listed key, the listed answer, unless runActionAnyway (then the limiter's record). */
  override get(key: string | number, options: RateLimiterCallOptions = {}): Promise<RateLimiterRes | null> {
    if (this.runActionAnyway) return this.limiter.get(key, options);
    return this._execAction('get', key, [options]);
  }

  override set(key: string | number, points: number, secDuration: number, options: RateLimiterCallOptions = {}): Promise<RateLimiterRes> {
    return this._execAction('set', key, [points, secDuration, options]) as Promise<RateLimiterRes>;
  }

  /** Always deletes on the wrapped limiter, listed or not. */
  override delete(key: string | number, options: RateLimiterCallOptions = {}): Promise<boolean> {
    return this.limiter.delete(key, options);
  }
}

/** A list predicate, or one that lists nothing when undefined; rlf's error when it is not a function. */
function predicate(func: unknown, name: 'isBlackListed' | 'isWhiteListed'): KeyPredicate {
  if (typeof func === 'undefined') return () => false;
  if (typeof func !== 'function') throw new Error(`${name} must be function`);
  return func as KeyPredicate;
}
