/**
 * RateLimiterCompatibleAbstract: what a limiter that does not extend
 * RateLimiterAbstract (the wrappers, Bursty, user limiters) extends to be
 * accepted where rlf accepts a limiter (a Union, `insuranceLimiter`, a
 * wrapper), as in rlf 11's `lib/RateLimiterCompatibleAbstract.js`. Every
 * member throws until the subclass implements it, with rlf's message.
 *
 * Subclasses implement `keyPrefix`, `blockDuration` and `execEvenly` as
 * accessors (get/set), not as fields.
 *
 * @module
 */
import { RateLimiterAbstract } from './abstract.js';
import type { RateLimiterCallOptions } from './options.js';
import type { RateLimiterRes } from './rate-limiter-res.js';

/** The base of limiters compatible with rlf's limiters without sharing their options. */
export class RateLimiterCompatibleAbstract {
  get keyPrefix(): string {
    throw new Error("You have to implement the getter 'keyPrefix'!");
  }

  get blockDuration(): number {
    throw new Error("You have to implement the getter 'blockDuration'!");
  }

  set blockDuration(_value: number) {
    throw new Error("You have to implement the setter 'blockDuration'!");
  }

  get execEvenly(): boolean {
    throw new Error("You have to implement the getter 'execEvenly'!");
  }

  set execEvenly(_value: boolean) {
    throw new Error("You have to implement the setter 'execEvenly'!");
  }

  consume(_key: string | number, _pointsToConsume?: number, _options?: RateLimiterCallOptions): Promise<RateLimiterRes> {
    throw new Error("You have to implement the method 'consume'!");
  }

  penalty(_key: string | number, _points?: number, _options?: RateLimiterCallOptions): Promise<RateLimiterRes> {
    throw new Error("You have to implement the method 'penalty'!");
  }

  reward(_key: string | number, _points?: number, _options?: RateLimiterCallOptions): Promise<RateLimiterRes> {
    throw new Error("You have to implement the method 'reward'!");
  }

  get(_key: string | number, _options?: RateLimiterCallOptions): Promise<RateLimiterRes | null> {
    throw new Error("You have to implement the method 'get'!");
  }

  set(_key: string | number, _points: number, _secDuration: number, _options?: RateLimiterCallOptions): Promise<RateLimiterRes> {
    throw new Error("You have to implement the method 'set'!");
  }

  block(_key: string | number, _secDuration: number, _options?: RateLimiterCallOptions): Promise<RateLimiterRes> {
    throw new Error("You have to implement the method 'block'!");
  }

  delete(_key: string | number, _options?: RateLimiterCallOptions): Promise<boolean> {
    throw new Error("You have to implement the method 'delete'!");
  }
}

const METHODS = ['consume', 'penalty', 'reward', 'get', 'set', 'block', 'delete'] as const;

/**
 * True for a limiter rlf accepts: an instance of RateLimiterAbstract or
 * RateLimiterCompatibleAbstract (rlf's `lib/helper/isRateLimiterCompatible.js`).
 *
 * Deliberate widening: it also accepts a limiter from another copy of this
 * package or of rate-limiter-flexible (two installed versions fail rlf's
 * `instanceof` check): an object with the seven methods consume, penalty,
 * reward, get, set, block and delete, and a string `keyPrefix`.
 *
 * @example
 * ```ts
 * isRateLimiterCompatible(new RateLimiterMemory({ points: 1, duration: 1 })); // true
 * isRateLimiterCompatible({}); // false
 * ```
 */
export function isRateLimiterCompatible(obj: unknown): boolean {
  if (obj instanceof RateLimiterAbstract || obj instanceof RateLimiterCompatibleAbstract) return true;
  if (obj === null || typeof obj !== 'object') return false;
  const candidate = obj as Record<string, unknown>;
  if (!METHODS.every((name) => typeof candidate[name] === 'function')) return false;
  try {
    return typeof candidate.keyPrefix === 'string';
  } catch {
    return false;
  }
}
