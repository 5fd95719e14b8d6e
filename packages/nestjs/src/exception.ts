import { HttpException, HttpStatus } from '@nestjs/common';

/** The default message of a refusal, @nestjs/throttler's. */
export const throttlerMessage = 'ThrottlerException: Too Many Requests';

/**
 * The exception a refusal throws: an `HttpException` with status 429 (RFC 6585 §4), so Nest's
 * exception filter answers `{ "statusCode": 429, "message": "ThrottlerException: Too Many Requests" }`,
 * as @nestjs/throttler does.
 *
 * @example
 * ```ts
 * throw new ThrottlerException('Slow down');
 * ```
 */
export class ThrottlerException extends HttpException {
  constructor(message?: string) {
    super(`${message || throttlerMessage}`, HttpStatus.TOO_MANY_REQUESTS);
  }
}
