/**
 * Float tolerance for comparisons of token counts. Rates such as 3 per 1,000 ms
 * give emission intervals like 333.33… ms, so "exactly enough tokens" can come
 * out as 2.9999999999 after a few operations. Counts within this tolerance of
 * the cost are treated as enough; it is far below any meaningful cost.
 */
export const EPSILON = 1e-9;

/** Whole units in `tokens`, forgiving float noise just below an integer. Does not go below 0. */
export function wholeTokens(tokens: number): number {
  return Math.max(0, Math.floor(tokens + EPSILON));
}

/**
 * Slack, in ms, for comparing a theoretical arrival time (the TAT of GCRA and
 * delay mode) with a bound. A TAT is an absolute time, and near today's Unix
 * epoch milliseconds (about 1.7e12) a double only holds multiples of 2⁻¹² ms:
 * each `tat + cost × T` rounds by up to half of that step, and the roundings
 * of a backlog add up (at `Date.now()`, 7 per 1,000 ms would refuse the 7th
 * request of a full burst, and report one token too few). The slack allows
 * one step per token of backlog plus one, on top of {@link EPSILON} tokens:
 * far below a meaningful duration, enough for costs of 0.5 and above.
 * Does not mutate; pure arithmetic.
 */
export function tatSlackMs(tatMs: number, nowMs: number, emissionIntervalMs: number): number {
  const backlog = Math.max(0, tatMs - nowMs) / emissionIntervalMs;
  return EPSILON * emissionIntervalMs + (backlog + 1) * Math.abs(tatMs) * Number.EPSILON;
}

/** `tokens` rounded to the nearest integer when within `tolerance` of it, else `tokens` unchanged. */
export function snapToWhole(tokens: number, tolerance: number): number {
  const whole = Math.round(tokens);
  return Math.abs(tokens - whole) <= tolerance ? whole : tokens;
}
