/**
 * Writing core's header list to an Express response, for both modes:
 * ratekit mode's decisions and express-rate-limit mode's counts both become
 * a `HeaderList` (core's `rateLimitHeaders()`) written here.
 *
 * @module
 */
import type { HeaderList } from '@ratekit/core';
import type { Response } from 'express';

/** The draft-8+ List fields. */
const LIST_FIELD = /^ratelimit(?:-policy)?$/i;

/**
 * Writes the header list from core's `rateLimitHeaders()` to an Express response.
 *
 * With `appendLists` (draft-8 and later) the `RateLimit` and
 * `RateLimit-Policy` values are appended to what an earlier limiter on the
 * same route wrote, as Structured Field Lists allow, so every limiter's
 * policies show; `RateLimit` goes first, as express-rate-limit writes them.
 * Every other field is set, so the last limiter wins: a repeated legacy
 * value such as `5, 3` would read as 5.
 */
export function writeHeaders(res: Response, headers: Readonly<HeaderList>, appendLists: boolean): void {
  for (let i = 0; i < headers.length; i++) {
    const [name, value] = headers[i]!;
    if (appendLists && LIST_FIELD.test(name)) res.append(name, value);
    else res.setHeader(name, value);
  }
}
