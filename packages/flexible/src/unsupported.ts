/**
 * rate-limiter-flexible's stores that @ratekit/flexible does not implement:
 * those whose servers cannot be tested here (MongoDB, MySQL, DynamoDB,
 * Prisma, Valkey GLIDE, SQLite, etcd, Drizzle).
 * They keep rlf's export names, so an import of them still resolves and an
 * app typed against rlf still compiles; constructing one throws a coded
 * error naming the store and the migration guide, rather than counting on a
 * store nobody has checked.
 *
 * @module
 */
import { RateKitError } from '@ratekit/core';
import { RateLimiterStoreAbstract } from './store-abstract.js';

/** The migration guide every unsupported-store error points to. */
export const MIGRATION_GUIDE = 'docs/migrating/rate-limiter-flexible.md';

/**
 * Thrown when an out-of-scope rlf store is constructed. `code` is
 * `ERR_RATEKIT_FLEXIBLE_UNSUPPORTED_STORE`, `store` the class's name.
 */
export class RateKitFlexibleUnsupportedStoreError extends RateKitError {
  /** The rlf class that was constructed, e.g. `RateLimiterMongo`. */
  readonly store: string;

  constructor(store: string) {
    super(
      'ERR_RATEKIT_FLEXIBLE_UNSUPPORTED_STORE',
      `${store} is not supported by @ratekit/flexible: it implements rate-limiter-flexible's Memory, Redis, Memcache, Postgres, Cluster and wrapper classes only. ` +
        `Keep rate-limiter-flexible for this store, or move its limiter to a supported store; see ${MIGRATION_GUIDE}.`,
    );
    this.name = 'RateKitFlexibleUnsupportedStoreError';
    this.store = store;
  }
}

/** Throws the error for `store`; called in place of the super-constructor's argument, so nothing is built. */
function unsupported(store: string): never {
  throw new RateKitFlexibleUnsupportedStoreError(store);
}

// Each class throws before anything is built; its constructor takes rlf's arguments (options, and a ready callback where rlf has one).

/** rlf's MongoDB store: not supported; constructing it throws {@link RateKitFlexibleUnsupportedStoreError}. */
export class RateLimiterMongo extends RateLimiterStoreAbstract {
  constructor(..._args: unknown[]) {
    super(unsupported('RateLimiterMongo'));
  }
}

/** rlf's MySQL store: not supported; constructing it throws {@link RateKitFlexibleUnsupportedStoreError}. */
export class RateLimiterMySQL extends RateLimiterStoreAbstract {
  constructor(..._args: unknown[]) {
    super(unsupported('RateLimiterMySQL'));
  }
}

/** rlf's DynamoDB store: not supported; constructing it throws {@link RateKitFlexibleUnsupportedStoreError}. */
export class RateLimiterDynamo extends RateLimiterStoreAbstract {
  constructor(..._args: unknown[]) {
    super(unsupported('RateLimiterDynamo'));
  }
}

/** rlf's Prisma store: not supported; constructing it throws {@link RateKitFlexibleUnsupportedStoreError}. */
export class RateLimiterPrisma extends RateLimiterStoreAbstract {
  constructor(..._args: unknown[]) {
    super(unsupported('RateLimiterPrisma'));
  }
}

/** rlf's Valkey GLIDE store: not supported; constructing it throws {@link RateKitFlexibleUnsupportedStoreError}. */
export class RateLimiterValkeyGlide extends RateLimiterStoreAbstract {
  constructor(..._args: unknown[]) {
    super(unsupported('RateLimiterValkeyGlide'));
  }

  /** rlf's close(); never reached, as construction throws. */
  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** rlf's SQLite store: not supported; constructing it throws {@link RateKitFlexibleUnsupportedStoreError}. */
export class RateLimiterSQLite extends RateLimiterStoreAbstract {
  constructor(..._args: unknown[]) {
    super(unsupported('RateLimiterSQLite'));
  }
}

/** rlf's etcd store: not supported; constructing it throws {@link RateKitFlexibleUnsupportedStoreError}. */
export class RateLimiterEtcd extends RateLimiterStoreAbstract {
  constructor(..._args: unknown[]) {
    super(unsupported('RateLimiterEtcd'));
  }
}

/** rlf's non-atomic etcd store: not supported; constructing it throws {@link RateKitFlexibleUnsupportedStoreError}. */
export class RateLimiterEtcdNonAtomic extends RateLimiterStoreAbstract {
  constructor(..._args: unknown[]) {
    super(unsupported('RateLimiterEtcdNonAtomic'));
  }
}

/** rlf's Drizzle store: not supported; constructing it throws {@link RateKitFlexibleUnsupportedStoreError}. */
export class RateLimiterDrizzle extends RateLimiterStoreAbstract {
  constructor(..._args: unknown[]) {
    super(unsupported('RateLimiterDrizzle'));
  }
}

/** rlf's non-atomic Drizzle store: not supported; constructing it throws {@link RateKitFlexibleUnsupportedStoreError}. */
export class RateLimiterDrizzleNonAtomic extends RateLimiterStoreAbstract {
  constructor(..._args: unknown[]) {
    super(unsupported('RateLimiterDrizzleNonAtomic'));
  }
}

/**
 * rlf's error for an etcd transaction that failed: exported under its name
 * so imports resolve and `instanceof` checks compile; nothing here raises it.
 */
export class RateLimiterEtcdTransactionFailedError extends Error {
  constructor(message?: string) {
    super();
    // Own, enumerable fields, as rlf assigns them after `super()`: JSON.stringify(err) shows name and message.
    this.name = 'RateLimiterEtcdTransactionFailedError';
    this.message = message as string;
  }
}

/**
 * rlf's error for a store set up wrongly (`lib/component/RateLimiterSetupError`), which rlf's etcd store
 * throws: exported under its name so the deep path resolves; nothing here raises it.
 */
export class RateLimiterSetupError extends Error {
  constructor(message?: string) {
    super();
    this.name = 'RateLimiterSetupError';
    this.message = message as string;
  }
}
