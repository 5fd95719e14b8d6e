/**
 * Differential: hono-rate-limiter 0.5.4 and our drop-in `rateLimiter`, each in
 * its own Hono app with its own memory store, get the same random requests
 * on one fake clock and must answer each with the same status, body and
 * headers. The clock is jest's: hono-rate-limiter's `MemoryStore` turns its
 * generations on a `setInterval`, which `advanceTimersByTime` fires at its
 * instants; ours computes the turns from `Date.now()`. The clock starts in
 * 2031, so a drop-in reading another clock would show in `RateLimit-Reset`.
 */
import fc from 'fast-check';
import { Hono } from 'hono';
import { rateLimiter as upstreamRateLimiter } from 'hono-rate-limiter';
import { rateLimiter } from './rate-limiter.js';
import { windowWaitArbitrary } from '@ratekit/test-utils';

/** Wed, 01 Jan 2031 00:00:00 GMT: far from the real clock. */
const T0 = Date.UTC(2031, 0, 1);

interface Config {
  startOffsetMs: number;
  limit: number;
  limitFunction: boolean;
  windowMs: number;
  standardHeaders: false | true | 'draft-6' | 'draft-7';
  statusCode: number;
  message: string | { error: string } | undefined;
  skipFailedRequests: boolean;
  skipSuccessfulRequests: boolean;
  skipHeader: boolean;
  successUnder300: boolean;
}

interface Step {
  dtMs: number;
  key: string;
  path: '/ok' | '/fail' | '/info' | '/throw' | '/store' | '/reset';
  skip: boolean;
}

const configArbitrary: fc.Arbitrary<Config> = fc.record({
  startOffsetMs: fc.integer({ min: 0, max: 999 }),
  limit: fc.integer({ min: 0, max: 5 }),
  limitFunction: fc.boolean(),
  windowMs: fc.constantFrom(1_000, 1_500, 2_000, 2_500, 60_000),
  standardHeaders: fc.constantFrom(false as const, true as const, 'draft-6' as const, 'draft-7' as const),
  statusCode: fc.constantFrom(429, 503),
  message: fc.constantFrom(undefined, 'slow down', { error: 'limited' }),
  skipFailedRequests: fc.boolean(),
  skipSuccessfulRequests: fc.boolean(),
  skipHeader: fc.boolean(),
  successUnder300: fc.boolean(),
});

/** Steps for a window of `windowMs`: waits of 0, within the window, at its edge, and beyond it. */
function stepsArbitrary(windowMs: number): fc.Arbitrary<Step[]> {
  const dtMs = windowWaitArbitrary(windowMs);
  const step = fc.record({
    dtMs,
    key: fc.constantFrom('a', 'b', 'c'),
    path: fc.constantFrom('/ok' as const, '/ok' as const, '/fail' as const, '/info' as const, '/throw' as const, '/store' as const, '/reset' as const),
    skip: fc.boolean(),
  });
  return fc.array(step, { minLength: 20, maxLength: 40 });
}

const scenario = configArbitrary.chain((config) => fc.tuple(fc.constant(config), stepsArbitrary(config.windowMs)));

function options(config: Config) {
  return {
    // A function answering a limit per key: `limit` for a and b, one more for c.
    limit: config.limitFunction ? async (c: { req: { header(name: string): string | undefined } }) => config.limit + Number(c.req.header('x-client') === 'c') : config.limit,
    windowMs: config.windowMs,
    standardHeaders: config.standardHeaders,
    statusCode: config.statusCode,
    ...(config.message === undefined ? {} : { message: config.message }),
    skipFailedRequests: config.skipFailedRequests,
    skipSuccessfulRequests: config.skipSuccessfulRequests,
    keyGenerator: (c: { req: { header(name: string): string | undefined } }) => c.req.header('x-client') ?? '',
    ...(config.successUnder300 ? { requestWasSuccessful: (c: { res: Response }) => c.res.status < 300 } : {}),
    ...(config.skipHeader ? { skip: (c: { req: { header(name: string): string | undefined } }) => c.req.header('x-skip') === '1' } : {}),
  };
}

function appWith(middleware: unknown): Hono {
  const app = new Hono();
  app.use(middleware as never);
  app.get('/ok', (c) => c.text('ok'));
  app.get('/fail', (c) => c.text('failed', 400));
  app.get('/info', (c) => c.json(c.get('rateLimit' as never)));
  // The store's view of another client (b), through c.get('rateLimitStore'); and a reset of it.
  type StoreAccess = { getKey(key: string): unknown; resetKey(key: string): unknown };
  app.get('/store', async (c) => c.json({ b: (await (c.get('rateLimitStore' as never) as StoreAccess).getKey('b')) ?? null }));
  app.get('/reset', async (c) => {
    await (c.get('rateLimitStore' as never) as StoreAccess).resetKey('b');
    return c.text('reset');
  });
  app.get('/throw', () => {
    throw new Error('broken');
  });
  app.onError((_error, c) => c.text('broken', 500)); // Hono's default logs it
  return app;
}

async function answer(app: Hono, step: Step) {
  const response = await app.request(step.path, { headers: { 'x-client': step.key, ...(step.skip ? { 'x-skip': '1' } : {}) } });
  return { status: response.status, headers: [...response.headers.entries()], body: await response.text() };
}

async function compare([config, steps]: [Config, Step[]]): Promise<void> {
  jest.clearAllTimers();
  jest.setSystemTime(T0 + config.startOffsetMs);
  const theirs = upstreamRateLimiter(options(config) as never);
  const ours = rateLimiter(options(config) as never);
  const [upstreamApp, ourApp] = [appWith(theirs), appWith(ours)];
  for (const [i, step] of steps.entries()) {
    jest.advanceTimersByTime(step.dtMs);
    const expected = await answer(upstreamApp, step);
    const actual = await answer(ourApp, step);
    if (JSON.stringify(actual) !== JSON.stringify(expected)) {
      throw new Error(
        `Request #${i} (${JSON.stringify(step)}, at +${Date.now() - T0 - config.startOffsetMs} ms) differs:\n  hono-rate-limiter: ${JSON.stringify(expected)}\n  ours: ${JSON.stringify(actual)}`,
      );
    }
  }
  jest.clearAllTimers(); // upstream's MemoryStore interval
}

describe('rateLimiter against hono-rate-limiter 0.5.4 (differential, one fake clock)', () => {
  beforeEach(() => jest.useFakeTimers({ now: T0, doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] }));
  afterEach(() => jest.useRealTimers());

  it('answers random request sequences with the same status, body and headers', async () => {
    await fc.assert(fc.asyncProperty(scenario, compare), { numRuns: 200 });
  });

  it('reads the clock jest fakes (a reset is counted from the fake 2031 clock)', async () => {
    const app = appWith(rateLimiter({ limit: 2, windowMs: 10_000, keyGenerator: () => 'k' }));
    const first = await app.request('/ok');
    jest.advanceTimersByTime(4_000);
    const second = await app.request('/ok');
    expect([first.headers.get('ratelimit-reset'), second.headers.get('ratelimit-reset')]).toEqual(['10', '6']);
  });
});
