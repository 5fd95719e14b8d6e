import type { ExecutionContext } from '@nestjs/common';
import type { ThrottlerGenerateKeyFunction, ThrottlerGetTrackerFunction, ThrottlerOptions } from './options.js';
import type { ThrottlerStorageRecord } from './storage.js';

/** What a refusal passes to `throwThrottlingException` and `errorMessage`: @nestjs/throttler's `ThrottlerLimitDetail`. */
export interface ThrottlerLimitDetail extends ThrottlerStorageRecord {
  /** The throttler's window, in ms. */
  ttl: number;
  /** The throttler's limit. */
  limit: number;
  /** The storage key. */
  key: string;
  /** The tracker (by default the client IP). */
  tracker: string;
}

/** What `handleRequest` receives for one throttler on one request. */
export interface ThrottlerRequest {
  context: ExecutionContext;
  limit: number;
  /** The window, in ms. */
  ttl: number;
  throttler: ThrottlerOptions;
  /** The block, in ms. */
  blockDuration: number;
  getTracker: ThrottlerGetTrackerFunction;
  generateKey: ThrottlerGenerateKeyFunction;
}
