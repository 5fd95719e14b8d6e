/**
 * Injection tokens and metadata keys. The strings are @nestjs/throttler's, so
 * code that injects the options by their token, or reads the metadata, keeps
 * working after the import changes.
 */
export const THROTTLER_OPTIONS = 'THROTTLER:MODULE_OPTIONS';
export const THROTTLER_LIMIT = 'THROTTLER:LIMIT';
export const THROTTLER_TTL = 'THROTTLER:TTL';
export const THROTTLER_TRACKER = 'THROTTLER:TRACKER';
export const THROTTLER_BLOCK_DURATION = 'THROTTLER:BLOCK_DURATION';
export const THROTTLER_KEY_GENERATOR = 'THROTTLER:KEY_GENERATOR';
export const THROTTLER_SKIP = 'THROTTLER:SKIP';
/** ratekit's own per-route options (algorithm, cost, blockDurationMs), one key per throttler name. */
export const THROTTLER_RATEKIT = 'THROTTLER:RATEKIT';
