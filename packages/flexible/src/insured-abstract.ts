/**
 * RateLimiterInsuredAbstract: the `insuranceLimiter` fallback of rlf's
 * `lib/RateLimiterInsuredAbstract.js`. Each public operation runs its
 * protected hook (`_consume`, `_penalty`, …); when the hook rejects with an
 * Error (a store failure) and an insurance limiter is set, the same call
 * is made on the insurance limiter, and its answer (or rejection) is the
 * answer. A refusal (a RateLimiterRes) is never sent to the insurance limiter.
 *
 * There is no switch back and no sync back: the next call tries the store
 * again (as in rlf).
 *
 * @module
 */
import { RateLimiterAbstract } from './abstract.js';
import { isRateLimiterCompatible } from './compatible-abstract.js';
import type { IRateLimiterOptions, RateLimiterCallOptions, RateLimiterLike } from './options.js';
import { RateLimiterRes } from './rate-limiter-res.js';

type Operation = 'consume' | 'penalty' | 'reward' | 'get' | 'set' | 'block' | 'delete';

/** A limiter that falls back to `insuranceLimiter` when its own store fails. */
export class RateLimiterInsuredAbstract extends RateLimiterAbstract {
  _insuranceLimiter: RateLimiterLike | undefined;

  /** @throws {Error} "insuranceLimiter must be instance of RateLimiterAbstract or RateLimiterCompatibleAbstract" */
  constructor(opts: IRateLimiterOptions = {} as IRateLimiterOptions) {
    super(opts);
    this.insuranceLimiter = opts.insuranceLimiter;
  }

  /**
   * The fallback limiter. On assignment it takes this limiter's `blockDuration`
   * and `execEvenly` (rlf overwrites them, so both answer alike).
   */
  get insuranceLimiter(): RateLimiterLike | undefined {
    return this._insuranceLimiter;
  }

  set insuranceLimiter(value: RateLimiterLike | undefined) {
    if (value !== undefined && !isRateLimiterCompatible(value)) {
      throw new Error('insuranceLimiter must be instance of RateLimiterAbstract or RateLimiterCompatibleAbstract');
    }
    this._insuranceLimiter = value;
    if (value) {
      value.blockDuration = this.blockDuration;
      value.execEvenly = this.execEvenly;
    }
  }

  /** Rejects with `err`, or answers with the insurance limiter when `err` is a store failure and one is set. */
  _handleError(err: unknown, funcName: Operation, resolve: (value: unknown) => void, reject: (reason: unknown) => void, params: unknown[]): void {
    const insurance = this.insuranceLimiter;
    if (err instanceof RateLimiterRes || insurance === undefined || !isRateLimiterCompatible(insurance)) {
      reject(err);
      return;
    }
    const call = (insurance[funcName] as (...args: unknown[]) => Promise<unknown>).apply(insurance, params);
    call.then(resolve, reject);
  }

  /** Runs a hook; a synchronous throw (a hook not implemented) propagates, as in rlf. */
  _operation<T>(hook: `_${Operation}`, params: unknown[]): Promise<T> {
    const promise = this[hook](...params);
    return new Promise<T>((resolve, reject) => {
      promise.then(
        (res) => resolve(res as T),
        (err: unknown) => this._handleError(err, hook.slice(1) as Operation, resolve as (value: unknown) => void, reject, params),
      );
    });
  }

  override consume(key: string | number, pointsToConsume = 1, options: RateLimiterCallOptions = {}): Promise<RateLimiterRes> {
    return this._operation('_consume', [key, pointsToConsume, options]);
  }

  override penalty(key: string | number, points = 1, options: RateLimiterCallOptions = {}): Promise<RateLimiterRes> {
    return this._operation('_penalty', [key, points, options]);
  }

  override reward(key: string | number, points = 1, options: RateLimiterCallOptions = {}): Promise<RateLimiterRes> {
    return this._operation('_reward', [key, points, options]);
  }

  override get(key: string | number, options: RateLimiterCallOptions = {}): Promise<RateLimiterRes | null> {
    return this._operation('_get', [key, options]);
  }

  override set(key: string | number, points: number, secDuration: number, options: RateLimiterCallOptions = {}): Promise<RateLimiterRes> {
    return this._operation('_set', [key, points, secDuration, options]);
  }

  override block(key: string | number, secDuration: number, options: RateLimiterCallOptions = {}): Promise<RateLimiterRes> {
    return this._operation('_block', [key, secDuration, options]);
  }

  override delete(key: string | number, options: RateLimiterCallOptions = {}): Promise<boolean> {
    return this._operation('_delete', [key, options]);
  }

  // The hooks, implemented by subclasses (store limiters give some of them other parameters, as in rlf).
  _consume(..._args: unknown[]): Promise<unknown> {
    throw new Error("You have to implement the method '_consume'!");
  }

  _penalty(..._args: unknown[]): Promise<unknown> {
    throw new Error("You have to implement the method '_penalty'!");
  }

  _reward(..._args: unknown[]): Promise<unknown> {
    throw new Error("You have to implement the method '_reward'!");
  }

  _get(..._args: unknown[]): Promise<unknown> {
    throw new Error("You have to implement the method '_get'!");
  }

  _set(..._args: unknown[]): Promise<unknown> {
    throw new Error("You have to implement the method '_set'!");
  }

  _block(..._args: unknown[]): Promise<unknown> {
    throw new Error("You have to implement the method '_block'!");
  }

  _delete(..._args: unknown[]): Promise<unknown> {
    throw new Error("You have to implement the method '_delete'!");
  }
}
