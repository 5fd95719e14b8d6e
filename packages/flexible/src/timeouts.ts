/**
 * RLWrapperTimeouts: a limiter whose every call gives up after `timeoutMs`,
 * as rlf's `lib/RLWrapperTimeouts.js`. A call the wrapped limiter has not
 * answered in time rejects with `Error('Operation timed out')`, an Error
 * like a store failure, so `insuranceLimiter` answers it when one is set
 * (the wrapper's own, else the wrapped limiter's). So no request hangs on a
 * dead store.
 *
 * A late answer of the wrapped limiter is dropped: the wrapper has already
 * rejected, and the late rejection is caught (no unhandled rejection). What
 * the wrapped limiter's store did meanwhile stays done: a consume that
 * timed out may still have been counted.
 *
 * @module
 */
import { isRateLimiterCompatible } from './compatible-abstract.js';
import { RateLimiterInsuredAbstract } from './insured-abstract.js';
import type { IRLWrapperTimeoutsOptions, RateLimiterCallOptions, RateLimiterLike } from './options.js';

type Operation = 'consume' | 'penalty' | 'reward' | 'get' | 'set' | 'block' | 'delete';

/**
 * Wraps a limiter so that each call rejects with `Error('Operation timed out')`
 * after `timeoutMs` milliseconds without an answer (default 0: the call must
 * answer before the next timer turn).
 *
 * @throws {TypeError} "limiter must be an instance of RateLimiterAbstract or RateLimiterCompatibleAbstract";
 *   "timeoutMs must be a non-negative number" (rlf's messages).
 *
 * @example
 * ```ts
 * const limiter = new RLWrapperTimeouts({
 *   limiter: new RateLimiterRedis({ storeClient: redis, points: 10, duration: 1 }),
 *   timeoutMs: 200,
 *   insuranceLimiter: new RateLimiterMemory({ points: 10, duration: 1 }),
 * });
 * await limiter.consume(ip); // answered by the memory limiter when Redis takes over 200 ms
 * ```
 */
export class RLWrapperTimeouts extends RateLimiterInsuredAbstract {
  _limiter!: RateLimiterLike;
  _timeoutMs!: number;

  constructor(opts: IRLWrapperTimeoutsOptions = {} as IRLWrapperTimeoutsOptions) {
    // rlf 11: a wrapper has no points or duration of its own.
    super({ ...opts, points: 0, duration: 0 });
    this.limiter = opts.limiter;
    this.timeoutMs = opts.timeoutMs || 0;
  }

  /** The wrapped limiter. Setting it takes its insuranceLimiter when the wrapper has none. */
  get limiter(): RateLimiterLike {
    return this._limiter;
  }

  set limiter(limiter: RateLimiterLike) {
    if (!isRateLimiterCompatible(limiter)) {
      throw new TypeError('limiter must be an instance of RateLimiterAbstract or RateLimiterCompatibleAbstract');
    }
    this._limiter = limiter;
    if (!this.insuranceLimiter && limiter instanceof RateLimiterInsuredAbstract) {
      this.insuranceLimiter = limiter.insuranceLimiter;
    }
  }

  /** Milliseconds a call may take before it rejects. */
  get timeoutMs(): number {
    return this._timeoutMs;
  }

  set timeoutMs(value: number) {
    if (typeof value !== 'number' || value < 0) throw new TypeError('timeoutMs must be a non-negative number');
    this._timeoutMs = value;
  }

  /** Calls the wrapped limiter, rejecting with `Error('Operation timed out')` after timeoutMs. */
  _run<T>(funcName: Operation, params: unknown[]): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timeout = setTimeout(() => reject(new Error('Operation timed out')), this.timeoutMs);
      const settle = (finish: () => void): void => {
        clearTimeout(timeout);
        finish();
      };
      let call: Promise<T>;
      try {
        call = (this.limiter[funcName] as (...args: unknown[]) => Promise<T>).apply(this.limiter, params);
      } catch (err) {
        settle(() => reject(err));
        return;
      }
      call.then(
        (result) => settle(() => resolve(result)),
        (err: unknown) => settle(() => reject(err)),
      );
    });
  }

  override _consume(key: string | number, pointsToConsume = 1, options: RateLimiterCallOptions = {}): Promise<unknown> {
    return this._run('consume', [key, pointsToConsume, options]);
  }

  override _penalty(key: string | number, points = 1, options: RateLimiterCallOptions = {}): Promise<unknown> {
    return this._run('penalty', [key, points, options]);
  }

  override _reward(key: string | number, points = 1, options: RateLimiterCallOptions = {}): Promise<unknown> {
    return this._run('reward', [key, points, options]);
  }

  override _get(key: string | number, options: RateLimiterCallOptions = {}): Promise<unknown> {
    return this._run('get', [key, options]);
  }

  override _set(key: string | number, points: number, secDuration: number, options: RateLimiterCallOptions = {}): Promise<unknown> {
    return this._run('set', [key, points, secDuration, options]);
  }

  override _block(key: string | number, secDuration: number, options: RateLimiterCallOptions = {}): Promise<unknown> {
    return this._run('block', [key, secDuration, options]);
  }

  override _delete(key: string | number, options: RateLimiterCallOptions = {}): Promise<unknown> {
    return this._run('delete', [key, options]);
  }
}
