import { RateKitOptionError } from '@ratekit/core';
import Koa from 'koa';
import request from 'supertest';
import { ratelimit } from '../rate-limit.js';
import { appServing } from './test-app.js';

const upstream = require('koa-ratelimit') as (options: Record<string, unknown>) => Koa.Middleware;

function build(factory: (options: Record<string, unknown>) => unknown, options: Record<string, unknown>) {
  return factory({ driver: 'memory', db: new Map(), max: 1, duration: 60_000, ...options }) as Koa.Middleware;
}

async function answers(middleware: Koa.Middleware) {
  const app = appServing(middleware);
  const responses = [];
  for (let i = 0; i < 2; i++) responses.push(await request(app.callback()).get('/'));
  return responses;
}

const CASES: Array<[string, Record<string, unknown>, string, string]> = [
  // situation, options, the option named, what koa-ratelimit 6 does with it (statuses, or a header)
  ['id: 1', { id: 1 }, 'id', '500,500'],
  ['id: false (a function answering false lets a request through; `false` itself is not one)', { id: false }, 'id', '500,500'],
  ['max: NaN', { max: Number.NaN }, 'max', '429,429'],
  ['max: Infinity', { max: Number.POSITIVE_INFINITY }, 'max', 'X-RateLimit-Limit: Infinity'],
  ['duration: NaN', { duration: Number.NaN }, 'duration', 'X-RateLimit-Reset: NaN'],
  ["status: '5'", { status: '5' }, 'status', '200,500'],
  ['status: 600 with throw', { status: 600, throw: true }, 'status', '200,500'],
  ['errorMessage as a function', { errorMessage: () => 'slow down' }, 'errorMessage', '200,500'],
  ['errorMessage: 1 with throw', { errorMessage: 1, throw: true }, 'errorMessage', '200,500'],
];

describe('koa-ratelimit mode refuses, when built, a value koa-ratelimit takes and then fails with', () => {
  it.each(CASES)('%s', (_situation, options, option) => {
    let thrown: unknown;
    try {
      build(ratelimit as never, options);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(RateKitOptionError);
    expect(thrown).toMatchObject({ code: 'ERR_RATEKIT_INVALID_OPTION', option });
    expect((thrown as Error).message).toMatch(new RegExp(`Expected \`${option}\` to be .+, got .+`));
  });

  it.each(CASES)('koa-ratelimit 6 itself, given %s, fails every request or refusal, or writes a non-finite header', async (_situation, options, _option, seen) => {
    const responses = await answers(build(upstream, options));
    if (seen.startsWith('X-')) {
      const name = seen.slice(0, seen.indexOf(':'));
      expect(`${name}: ${String(responses[0]!.headers[name.toLowerCase()])}`).toBe(seen);
    } else {
      expect(responses.map((r) => r.status).join(',')).toBe(seen);
    }
  });
});

describe("koa-ratelimit mode keeps koa-ratelimit's fallbacks and what works", () => {
  it.each<[string, Record<string, unknown>, string]>([
    ['a falsy status: 429 (`opts.status || 429`)', { status: 0 }, '200,429'],
    ['a falsy errorMessage: the default message', { errorMessage: '' }, '200,429'],
    ['max: Infinity with the headers off: nothing refused', { max: Number.POSITIVE_INFINITY, disableHeader: true }, '200,200'],
    ['an id function answering false: the request goes through uncounted', { id: () => false }, '200,200'],
    ['an object errorMessage with throw: its properties on the error', { errorMessage: { expose: true }, throw: true }, '200,429'],
  ])('%s', async (_situation, options, statuses) => {
    const ours = await answers(build(ratelimit as never, options));
    const theirs = await answers(build(upstream, options));
    expect(ours.map((r) => r.status).join(',')).toBe(statuses);
    expect(theirs.map((r) => r.status).join(',')).toBe(statuses);
  });
});
