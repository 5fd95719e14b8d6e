/**
 * Durations in milliseconds, as @nestjs/throttler's helpers: `ttl: seconds(10)`,
 * `blockDuration: minutes(5)`.
 *
 * @example
 * ```ts
 * ThrottlerModule.forRoot([{ ttl: minutes(1), limit: 100 }]);
 * ```
 */
export const seconds = (howMany: number): number => howMany * 1_000;
/** `howMany` minutes in milliseconds. */
export const minutes = (howMany: number): number => howMany * 60_000;
/** `howMany` hours in milliseconds. */
export const hours = (howMany: number): number => howMany * 3_600_000;
/** `howMany` days in milliseconds. */
export const days = (howMany: number): number => howMany * 86_400_000;
/** `howMany` weeks in milliseconds. */
export const weeks = (howMany: number): number => howMany * 604_800_000;
