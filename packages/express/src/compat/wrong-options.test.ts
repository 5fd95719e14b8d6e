import { checkWrongOptions, type WrongOptionOutcome } from '@ratekit/test-utils';
import type { RequestHandler } from 'express';
import request from 'supertest';
import { rateLimit } from '../rate-limit.js';
import type { Logger } from '../types.js';
import { slowDown } from './slow-down.js';
import { appServing } from './test-app.js';

const quiet: Logger = { warn: () => undefined, error: () => undefined };

/** Builds the middleware, then sends it three requests (the third over the limit): what each answered. */
async function attempt(build: () => RequestHandler): Promise<WrongOptionOutcome> {
  let middleware: RequestHandler;
  try {
    middleware = build();
  } catch (thrown) {
    return { thrown };
  }
  const app = appServing(middleware);
  const responses = [];
  for (let i = 0; i < 3; i++) {
    const res = await request(app)
      .get('/')
      .timeout(2_000)
      .catch((error: { timeout?: number }) => {
        if (error.timeout === undefined) throw error;
        return { status: 504, headers: { hung: 'the request hung' } };
      });
    responses.push({ status: res.status, headers: res.headers as Record<string, unknown> });
  }
  return { responses };
}

/** express-rate-limit's own construction errors, with its messages. */
function expressRateLimitError(option: string, _value: unknown, error: unknown): boolean {
  const message = (error as Error | null)?.message;
  return (
    error instanceof TypeError &&
    ((option === 'logger' && message === 'Provided logger does not implement the Logger interface') || (option === 'store' && message?.startsWith('An invalid store was passed') === true))
  );
}

describe('rateLimit in express-rate-limit mode, each option given a value of the wrong type', () => {
  it('is refused when built (ERR_RATEKIT_INVALID_OPTION), or answers every request without a 500 and with finite header values', async () => {
    await checkWrongOptions({
      options: [
        'windowMs',
        'limit',
        'max',
        'message',
        'statusCode',
        'legacyHeaders',
        'headers',
        'standardHeaders',
        'identifier',
        'retryAfter',
        'requestPropertyName',
        'skipFailedRequests',
        'skipSuccessfulRequests',
        'keyGenerator',
        'ipv6Subnet',
        'handler',
        'skip',
        'requestWasSuccessful',
        'store',
        'validate',
        'passOnStoreError',
        'logger',
      ],
      variants: ['draft-6', 'draft-7', 'draft-8'],
      functionOptions: ['limit', 'max', 'message', 'identifier', 'retryAfter', 'keyGenerator', 'ipv6Subnet', 'handler', 'skip', 'requestWasSuccessful'],
      attempt: (option, value, draft) => attempt(() => rateLimit({ windowMs: 60_000, limit: 2, legacyHeaders: true, standardHeaders: draft as 'draft-7', logger: quiet, [option]: value })),
      incumbentError: expressRateLimitError,
    });
  });
});

describe('slowDown, each option given a value of the wrong type', () => {
  it('is refused when built (ERR_RATEKIT_INVALID_OPTION), or answers every request without a 500 and with finite header values', async () => {
    await checkWrongOptions({
      options: [
        'delayAfter',
        'delayMs',
        'maxDelayMs',
        'delayHeader',
        'windowMs',
        'legacyHeaders',
        'standardHeaders',
        'requestPropertyName',
        'skipFailedRequests',
        'skipSuccessfulRequests',
        'keyGenerator',
        'ipv6Subnet',
        'skip',
        'requestWasSuccessful',
        'store',
        'validate',
        'passOnStoreError',
        'logger',
      ],
      variants: ['draft-6', 'draft-7', 'draft-8'],
      functionOptions: ['delayAfter', 'delayMs', 'maxDelayMs', 'keyGenerator', 'ipv6Subnet', 'skip', 'requestWasSuccessful'],
      attempt: (option, value, draft) =>
        attempt(() =>
          slowDown({ windowMs: 60_000, delayAfter: 1, delayMs: () => 1, maxDelayMs: 5, legacyHeaders: true, standardHeaders: draft as 'draft-7', delayHeader: true, logger: quiet, [option]: value }),
        ),
      // express-slow-down's own: `limit`/`max` are refused, and a numeric maxDelayMs over 2³¹ − 1.
      incumbentError: (option, value, error) =>
        expressRateLimitError(option, value, error) || (option === 'maxDelayMs' && error instanceof Error && error.message.startsWith("The 'maxDelayMs' option cannot be greater than")),
    });
  });
});

describe('rateLimit in ratekit mode, each option given a value of the wrong type', () => {
  it('is refused when built (ERR_RATEKIT_INVALID_OPTION), or answers every request without a 500 and with finite header values', async () => {
    await checkWrongOptions({
      options: [
        'algorithm',
        'limits',
        'cost',
        'prefix',
        'onStoreError',
        'storeTimeoutMs',
        'onError',
        'windowMs',
        'limit',
        'message',
        'statusCode',
        'legacyHeaders',
        'standardHeaders',
        'identifier',
        'retryAfter',
        'requestPropertyName',
        'skipFailedRequests',
        'skipSuccessfulRequests',
        'keyGenerator',
        'ipv6Subnet',
        'handler',
        'skip',
        'requestWasSuccessful',
        'validate',
        'logger',
      ],
      variants: ['draft-6', 'draft-7', 'draft-8'],
      anyOptionNamed: true,
      functionOptions: ['limits', 'cost', 'onError', 'message', 'identifier', 'retryAfter', 'keyGenerator', 'ipv6Subnet', 'handler', 'skip', 'requestWasSuccessful', 'limit'],
      attempt: (option, value, draft) =>
        attempt(() => rateLimit({ algorithm: 'fixed-window', windowMs: 60_000, limit: 2, legacyHeaders: true, standardHeaders: draft as 'draft-7', logger: quiet, [option]: value })),
      incumbentError: expressRateLimitError,
    });
  });
});
