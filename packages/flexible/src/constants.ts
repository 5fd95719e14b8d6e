/**
 * rate-limiter-flexible's `lib/constants`: the limiter types {@link ExpressBruteFlexible} is built on, and the
 * message it throws for any other.
 *
 * @module
 */

/** The `limiterType` values of `new ExpressBruteFlexible(limiterType, options)`, as rlf names them. */
export const LIMITER_TYPES = {
  MEMORY: 'memory',
  CLUSTER: 'cluster',
  MEMCACHE: 'memcache',
  MONGO: 'mongo',
  REDIS: 'redis',
  MYSQL: 'mysql',
  POSTGRES: 'postgres',
  DYNAMO: 'dynamo',
  PRISMA: 'prisma',
  SQLITE: 'sqlite',
  VALKEY: 'valkey',
  VALKEY_GLIDE: 'valkey-glide',
} as const;

/** The message of the `Error` thrown for a `limiterType` not in {@link LIMITER_TYPES} (rlf's text). */
export const ERR_UNKNOWN_LIMITER_TYPE_MESSAGE = 'Unknown limiter type. Use one of LIMITER_TYPES constants.';
