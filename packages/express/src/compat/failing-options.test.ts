import { RateKitOptionError } from '@ratekit/core';
import { rateLimit as realRateLimit } from 'express-rate-limit';
import request from 'supertest';
import { rateLimit } from '../rate-limit.js';
import type { Logger } from '../types.js';
import { appServing } from './test-app.js';

const quiet: Logger = { warn: () => undefined, error: () => undefined };

function thrownBy(options: Record<string, unknown>): unknown {
  try {
    rateLimit({ logger: quiet, ...options });
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('express-rate-limit mode refuses, when built, a value express-rate-limit takes and then fails with', () => {
  it.each<[string, Record<string, unknown>, string]>([
    ['skip: 1 (a 500 on every request)', { skip: 1 }, 'skip'],
    ["keyGenerator: 'x' (a 500 on every request)", { keyGenerator: 'x' }, 'keyGenerator'],
    ['limit as a symbol (a 500 on every request)', { limit: Symbol('limit') }, 'limit'],
    ['max as a bigint (a 500 on every request)', { max: 5n }, 'max'],
    ['windowMs as a symbol (a 500 on every request)', { windowMs: Symbol('window') }, 'windowMs'],
    ['requestPropertyName as an object with no prototype (a 500 on every request)', { requestPropertyName: Object.create(null) }, 'requestPropertyName'],
    ["handler: 'x' (a 500 on every refusal)", { handler: 'x' }, 'handler'],
    ['statusCode: 42 (a 500 on every refusal)', { statusCode: 42 }, 'statusCode'],
    ["statusCode: '429' (Express 5 refuses a string: a 500 on every refusal)", { statusCode: '429' }, 'statusCode'],
    ['limit: NaN (X-RateLimit-Limit: NaN)', { limit: Number.NaN }, 'limit'],
    ['limit: Infinity (X-RateLimit-Limit: Infinity)', { limit: Number.POSITIVE_INFINITY }, 'limit'],
    ["limit: 'x' with standard headers (NaN in them)", { limit: 'x', legacyHeaders: false, standardHeaders: 'draft-7' }, 'limit'],
    ['retryAfter: NaN (Retry-After: NaN)', { retryAfter: Number.NaN }, 'retryAfter'],
    ['identifier: -Infinity with draft-8', { identifier: Number.NEGATIVE_INFINITY, standardHeaders: 'draft-8' }, 'identifier'],
    ["identifier: '' with draft-8 (no policy name)", { identifier: '', standardHeaders: 'draft-8' }, 'identifier'],
  ])('%s', (_situation, options, option) => {
    const thrown = thrownBy(options);
    expect(thrown).toBeInstanceOf(RateKitOptionError);
    expect(thrown).toMatchObject({ code: 'ERR_RATEKIT_INVALID_OPTION', option });
    expect((thrown as Error).message).toMatch(new RegExp(`Expected \`${option}\` to be .+, got .+`));
  });
});

describe('express-rate-limit itself, given those values, fails every request (or every refusal), or writes NaN or Infinity', () => {
  it.each<[string, Record<string, unknown>, string]>([
    ['skip: 1', { skip: 1 }, '500,500,500'],
    ["keyGenerator: 'x'", { keyGenerator: 'x' }, '500,500,500'],
    ['limit as a symbol', { limit: Symbol('limit') }, '500,500,500'],
    ["handler: 'x'", { handler: 'x' }, '200,200,500'],
    ['statusCode: 42', { statusCode: 42 }, '200,200,500'],
    ['limit: NaN', { limit: Number.NaN }, 'X-RateLimit-Limit: NaN'],
    ['limit: Infinity', { limit: Number.POSITIVE_INFINITY }, 'X-RateLimit-Limit: Infinity'],
  ])('%s', async (_situation, options, seen) => {
    const app = appServing(realRateLimit({ limit: 2, validate: false, ...options }));
    const responses = [];
    for (let i = 0; i < 3; i++) responses.push(await request(app).get('/'));
    if (seen.startsWith('X-')) expect(`X-RateLimit-Limit: ${responses[0]!.headers['x-ratelimit-limit']}`).toBe(seen);
    else expect(responses.map((r) => r.status).join(',')).toBe(seen);
  });
});

describe('express-rate-limit mode keeps what express-rate-limit does with a value that works', () => {
  it.each<[string, Record<string, unknown>]>([
    ["limit: '5' (its arithmetic makes it 5)", { limit: '5' }],
    ['limit: NaN with every header off (nothing carries it; nothing is refused)', { limit: Number.NaN, legacyHeaders: false, standardHeaders: false }],
    [
      "statusCode: 'x' with a custom handler (the default handler, its only user, never runs)",
      { statusCode: 'x', handler: (_req: unknown, res: { sendStatus(n: number): void }) => res.sendStatus(429) },
    ],
    ['skip and keyGenerator as functions', { skip: () => false, keyGenerator: () => 'k' }],
    ['identifier: 1 with draft-6 (only draft-8 uses it)', { identifier: 1, standardHeaders: 'draft-6' }],
  ])('%s', (_situation, options) => {
    expect(thrownBy(options)).toBeUndefined();
  });

  it("sends a numeric identifier as express-rate-limit's draft-8 does: its string", async () => {
    const res = await request(appServing(rateLimit({ identifier: 1 as never, standardHeaders: 'draft-8', legacyHeaders: false, limit: 2, logger: quiet }))).get('/');
    expect(res.headers['ratelimit']).toBe('"1"; r=1; t=60');
  });

  it('with every header off, limit NaN refuses nothing, as express-rate-limit', async () => {
    const app = appServing(rateLimit({ limit: Number.NaN, legacyHeaders: false, logger: quiet }));
    for (let i = 0; i < 3; i++) expect((await request(app).get('/')).status).toBe(200);
  });
});

describe('express-rate-limit mode never puts a non-finite number in a header, whatever a function answers', () => {
  it.each([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, undefined])('a limit function answering %s: no rate-limit headers on that response', async (limit) => {
    const app = appServing(rateLimit({ limit: () => limit as number, legacyHeaders: true, standardHeaders: 'draft-8', logger: quiet }));
    const res = await request(app).get('/');
    expect(res.status).toBe(limit === Number.NEGATIVE_INFINITY ? 429 : 200); // express-rate-limit's comparison: hits > limit
    expect(Object.keys(res.headers).filter((name) => /ratelimit/i.test(name))).toEqual([]);
    if (res.status === 429) expect(res.headers['retry-after']).toBe('60');
  });

  it.each([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])('a retryAfter function answering %s: the computed Retry-After instead', async (seconds) => {
    const app = appServing(rateLimit({ limit: 1, retryAfter: () => seconds, logger: quiet }));
    await request(app).get('/');
    const refused = await request(app).get('/');
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('60');
  });
});
