/**
 * The names `validate` accepts, one per configuration check: express-rate-limit
 * v8's. The public `ValidationName` type (types.ts) is made from this list;
 * the checks themselves are express-rate-limit's, in compat/validations.ts.
 *
 * @module
 */

/** Every check, in express-rate-limit's order (the order its `ERR_ERL_UNKNOWN_VALIDATION` message lists them in). */
export const VALIDATION_NAMES = [
  'ip',
  'trustProxy',
  'xForwardedForHeader',
  'forwardedHeader',
  'positiveHits',
  'unsharedStore',
  'singleCount',
  'limit',
  'draftPolliHeaders',
  'onLimitReached',
  'headersDraftVersion',
  'headersResetTime',
  'knownOptions',
  'validationsConfig',
  'creationStack',
  'ipv6Subnet',
  'ipv6SubnetOrKeyGenerator',
  'keyGeneratorIpFallback',
  'windowMs',
] as const;
