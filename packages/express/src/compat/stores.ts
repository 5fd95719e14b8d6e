import type { IncrementResponse, LegacyStore, Store } from '../types.js';

/** True for an express-rate-limit ≤ 5 store: `incr` and no `increment` (a store with both is a modern one). */
export function isLegacyStore(store: unknown): store is LegacyStore {
  const candidate = store as Partial<LegacyStore & Store> | null | undefined;
  return typeof candidate?.incr === 'function' && typeof candidate.increment !== 'function';
}

/** True when `store` has the methods express-rate-limit requires of a store (and optional ones, if present, are functions). */
export function hasStoreShape(store: unknown): store is Store {
  const candidate = store as Partial<Store> | null | undefined;
  return (
    typeof candidate?.increment === 'function' &&
    typeof candidate.decrement === 'function' &&
    typeof candidate.resetKey === 'function' &&
    (candidate.resetAll === undefined || typeof candidate.resetAll === 'function') &&
    (candidate.init === undefined || typeof candidate.init === 'function')
  );
}

/** express-rate-limit's message for a store without the required methods (thrown as a TypeError, as it does). */
export const INVALID_STORE_MESSAGE = 'An invalid store was passed. Please ensure that the store is a class that implements the `Store` interface.';

/**
 * A legacy `incr(key, callback)` store behind the promise-based contract, as
 * express-rate-limit wraps them: `incr`, `decrement`, `resetKey` and
 * `resetAll` are forwarded; there is no `get` and no `init`.
 */
export class PromisifiedStore implements Store {
  readonly #legacy: LegacyStore;

  constructor(legacy: LegacyStore) {
    this.#legacy = legacy;
  }

  increment(key: string): Promise<IncrementResponse> {
    return new Promise((resolve, reject) => {
      this.#legacy.incr(key, (error, totalHits, resetTime) => {
        if (error) reject(error);
        else resolve({ totalHits, resetTime });
      });
    });
  }

  async decrement(key: string): Promise<void> {
    // eslint-disable-next-line @typescript-eslint/await-thenable -- typed void as express-rate-limit types it, but a legacy store may return a promise: awaiting surfaces its rejection
    await this.#legacy.decrement(key);
  }

  async resetKey(key: string): Promise<void> {
    // eslint-disable-next-line @typescript-eslint/await-thenable -- typed void as express-rate-limit types it, but a legacy store may return a promise: awaiting surfaces its rejection
    await this.#legacy.resetKey(key);
  }

  async resetAll(): Promise<void> {
    // eslint-disable-next-line @typescript-eslint/await-thenable -- typed void as express-rate-limit types it, but a legacy store may return a promise: awaiting surfaces its rejection
    if (typeof this.#legacy.resetAll === 'function') await this.#legacy.resetAll();
  }
}
