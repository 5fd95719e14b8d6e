import { checkWrongOptions, type WrongOptionOutcome } from '@ratekit/test-utils';
import Koa from 'koa';
import request from 'supertest';
import { ratelimit } from '../rate-limit.js';
import { appServing } from './test-app.js';

/** Builds the middleware (koa-ratelimit mode: the memory driver; or ratekit mode: a fixed window; 2 per minute), then sends it three requests (the third refused): what each answered. */
async function attempt(option: string, value: unknown, throwMode: unknown, ratekitMode = false): Promise<WrongOptionOutcome> {
  let middleware: Koa.Middleware;
  try {
    const base = ratekitMode ? { algorithm: 'fixed-window', standardHeaders: 'draft-8' } : { driver: 'memory', db: new Map() };
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- needed: neither overload of ratelimit() takes these deliberately wrong values (tsc refuses the call without it)
    middleware = ratelimit({ ...base, max: 2, duration: 60_000, throw: throwMode, [option]: value } as never) as unknown as Koa.Middleware;
  } catch (thrown) {
    return { thrown };
  }
  const app = appServing(middleware);
  const responses = [];
  for (let i = 0; i < 3; i++) {
    const res = await request(app.callback())
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

describe('ratelimit in koa-ratelimit mode, each option given a value of the wrong type', () => {
  it('is refused when built (ERR_RATEKIT_INVALID_OPTION), or answers every request without a 500 and with finite header values', async () => {
    await checkWrongOptions({
      options: [
        'driver',
        'db',
        'duration',
        'max',
        'id',
        'namespace',
        'headers',
        'disableHeader',
        'whitelist',
        'blacklist',
        'errorMessage',
        'status',
        'throw',
        'onLimited',
        'storeTimeoutMs',
        'maxKeys',
      ],
      variants: [false, true],
      functionOptions: ['id', 'whitelist', 'blacklist', 'onLimited'],
      attempt,
      // koa-ratelimit's own: destructuring `headers: null` throws its TypeError.
      incumbentError: (option, value, error) => option === 'headers' && value === null && error instanceof TypeError,
    });
  });
});

describe('ratelimit in ratekit mode, each option given a value of the wrong type', () => {
  it('is refused when built (ERR_RATEKIT_INVALID_OPTION), or answers every request without a 500 and with finite header values', async () => {
    await checkWrongOptions({
      options: [
        'algorithm',
        'limits',
        'cost',
        'standardHeaders',
        'legacyHeaders',
        'store',
        'onStoreError',
        'onError',
        'db',
        'duration',
        'max',
        'id',
        'namespace',
        'headers',
        'disableHeader',
        'whitelist',
        'blacklist',
        'errorMessage',
        'status',
        'throw',
        'onLimited',
        'storeTimeoutMs',
        'maxKeys',
      ],
      variants: [false, true],
      anyOptionNamed: true,
      functionOptions: ['limits', 'cost', 'onError', 'id', 'whitelist', 'blacklist', 'errorMessage', 'onLimited'],
      attempt: (option, value, throwMode) => attempt(option, value, throwMode, true),
    });
  });
});
