/**
 * Differential: @fastify/rate-limit 11.2.0 and our drop-in, each registered
 * with the same options in its own Fastify app with its in-memory store, get
 * the same random requests (`inject`) on one fake clock and must answer each
 * with the same status, body, headers and hook calls (`createRateLimit()`'s
 * peek included). Both stores read `Date.now()`,
 * which jest fakes; the clock starts in 2031, so a drop-in reading another
 * clock would count its windows wrong.
 *
 * Left out of generation: `timeWindow: 0`, where upstream sends
 * `retry-after: 0` and we send 1 (docs/migrating/fastify-rate-limit.md,
 * "Deliberate differences" 1).
 */
import fc from 'fast-check';
import Fastify, { type FastifyInstance, type FastifyPluginCallback, type FastifyRequest } from 'fastify';
import fastifyRateLimit from '../index.js';

// The incumbent, loaded untyped: its type declarations augment Fastify's and would clash with ours.
const upstream = require('@fastify/rate-limit') as FastifyPluginCallback<Record<string, unknown>>;

/** Wed, 01 Jan 2031 00:00:00 GMT: far from the real clock. */
const T0 = Date.UTC(2031, 0, 1);

const LEGACY_LABELS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];
const DRAFT_LABELS = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'];
const PATHS = ['/ok', '/ok', '/fail', '/own', '/g1', '/g2', '/off', '/peek'] as const;

interface Config {
  startOffsetMs: number;
  max: number | undefined;
  maxFunction: boolean;
  timeWindowFunction: boolean;
  timeWindow: number | string;
  routeMax: number;
  routeTimeWindow: number | string;
  hook: 'onRequest' | 'preHandler';
  continueExceeding: boolean;
  exponentialBackoff: boolean;
  ban: number | undefined;
  enableDraftSpec: boolean;
  hiddenHeaders: number[];
  hiddenHeadersOnExceeding: number[];
  hideRetryAfter: boolean;
  allowList: 'none' | 'list' | 'function';
  customError: 'none' | 'withStatus' | 'withoutStatus';
  global: boolean;
  cache: number | undefined;
}

interface Step {
  dtMs: number;
  key: string;
  path: (typeof PATHS)[number];
}

const timeWindow = fc.constantFrom<number | string>(1_000, 1_500, 2_000, 2_500, 60_000, '1 second', '2s', '1500');

const configArbitrary: fc.Arbitrary<Config> = fc.record({
  startOffsetMs: fc.integer({ min: 0, max: 999 }),
  max: fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined, freq: 10 }),
  maxFunction: fc.boolean(),
  timeWindowFunction: fc.boolean(),
  timeWindow,
  routeMax: fc.integer({ min: 0, max: 4 }),
  routeTimeWindow: timeWindow,
  hook: fc.constantFrom('onRequest' as const, 'preHandler' as const),
  continueExceeding: fc.boolean(),
  exponentialBackoff: fc.boolean(),
  ban: fc.constantFrom(undefined, 0, 1, 2),
  enableDraftSpec: fc.boolean(),
  hiddenHeaders: fc.subarray([0, 1, 2]),
  hiddenHeadersOnExceeding: fc.subarray([0, 1, 2]),
  hideRetryAfter: fc.boolean(),
  allowList: fc.constantFrom('none' as const, 'list' as const, 'function' as const),
  customError: fc.constantFrom('none' as const, 'withStatus' as const, 'withoutStatus' as const),
  global: fc.boolean(),
  cache: fc.constantFrom(undefined, 1, 2),
});

/** Waits of 0, within a window, at its edges, and beyond it. */
const stepsArbitrary: fc.Arbitrary<Step[]> = fc.array(
  fc.record({
    dtMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 2_500 }), fc.constantFrom(499, 500, 999, 1_000, 1_001, 1_499, 1_500, 2_000), fc.integer({ min: 2_500, max: 10_000 })),
    key: fc.constantFrom('a', 'b', 'c'),
    path: fc.constantFrom(...PATHS),
  }),
  { minLength: 20, maxLength: 40 },
);

/** The plugin's options; `calls` collects the hooks' calls (`onExceeding`, `onExceeded`, `onBanReach`), by key. */
function options(config: Config, calls: string[]): Record<string, unknown> {
  const labels = config.enableDraftSpec ? DRAFT_LABELS : LEGACY_LABELS;
  const hidden = (indexes: number[]) => Object.fromEntries(indexes.map((i) => [labels[i], false]));
  return {
    // Functions answer per key: `max` (or 2) for a and b, one more for c; the window, doubled for c.
    ...(config.maxFunction ? { max: async (_request: FastifyRequest, key: string) => (config.max ?? 2) + Number(key === 'c') } : config.max === undefined ? {} : { max: config.max }),
    timeWindow: config.timeWindowFunction ? (_request: FastifyRequest, key: string) => (typeof config.timeWindow === 'number' ? config.timeWindow : 1_000) * (key === 'c' ? 2 : 1) : config.timeWindow,
    onExceeding: (_request: FastifyRequest, key: string) => void calls.push(`onExceeding ${key}`),
    onExceeded: (_request: FastifyRequest, key: string) => void calls.push(`onExceeded ${key}`),
    onBanReach: (_request: FastifyRequest, key: string) => void calls.push(`onBanReach ${key}`),
    hook: config.hook,
    ...(config.cache === undefined ? {} : { cache: config.cache }),
    continueExceeding: config.continueExceeding,
    exponentialBackoff: config.exponentialBackoff,
    ...(config.ban === undefined ? {} : { ban: config.ban }),
    enableDraftSpec: config.enableDraftSpec,
    addHeaders: { ...hidden(config.hiddenHeaders), ...(config.hideRetryAfter ? { 'retry-after': false } : {}) },
    addHeadersOnExceeding: hidden(config.hiddenHeadersOnExceeding),
    keyGenerator: (request: FastifyRequest) => String(request.headers['x-client']),
    ...(config.allowList === 'list' ? { allowList: ['c'] } : {}),
    ...(config.allowList === 'function' ? { allowList: (_request: FastifyRequest, key: string) => key === 'c' } : {}),
    ...(config.customError === 'withStatus' ? { errorResponseBuilder: (_request: FastifyRequest, context: Record<string, unknown>) => ({ limited: true, ...context }) } : {}),
    ...(config.customError === 'withoutStatus' ? { errorResponseBuilder: (_request: FastifyRequest, context: Record<string, unknown>) => ({ limited: true, after: context.after }) } : {}),
    ...(config.global ? {} : { global: false }),
  };
}

async function appWith(plugin: unknown, config: Config, calls: string[]): Promise<FastifyInstance> {
  const app = Fastify();
  await app.register(plugin as FastifyPluginCallback<Record<string, unknown>>, options(config, calls));
  app.get('/ok', async () => 'ok');
  app.get('/fail', async (_request, reply) => reply.code(400).send('failed'));
  app.get('/own', { config: { rateLimit: { max: config.routeMax, timeWindow: config.routeTimeWindow } } }, async () => 'own');
  app.get('/g1', { config: { rateLimit: { max: config.routeMax, groupId: 'g' } } }, async () => 'g1');
  app.get('/g2', { config: { rateLimit: { max: config.routeMax, groupId: 'g' } } }, async () => 'g2');
  app.get('/off', { config: { rateLimit: false } }, async () => 'off');
  // createRateLimit(): a peek at the plugin's count for the client, without counting.
  const check = (app as unknown as { createRateLimit(): (request: FastifyRequest, options: { increment: boolean }) => Promise<unknown> }).createRateLimit();
  app.get('/peek', { config: { rateLimit: false } }, async (request) => JSON.stringify(await check(request, { increment: false })));
  await app.ready();
  return app;
}

async function answer(app: FastifyInstance, calls: string[], step: Step) {
  const response = await app.inject({ url: step.path, headers: { 'x-client': step.key } });
  // `date` is written by Node from the real clock.
  const headers = Object.entries(response.headers).filter(([name]) => name !== 'date');
  return { status: response.statusCode, headers, body: response.body, calls: calls.splice(0) };
}

async function compare([config, steps]: [Config, Step[]]): Promise<void> {
  jest.setSystemTime(T0 + config.startOffsetMs);
  const theirCalls: string[] = [];
  const ourCalls: string[] = [];
  const theirs = await appWith(upstream, config, theirCalls);
  const ours = await appWith(fastifyRateLimit, config, ourCalls);
  try {
    for (const [i, step] of steps.entries()) {
      jest.advanceTimersByTime(step.dtMs);
      const expected = await answer(theirs, theirCalls, step);
      const actual = await answer(ours, ourCalls, step);
      if (JSON.stringify(actual) !== JSON.stringify(expected)) {
        throw new Error(
          `Request #${i} (${JSON.stringify(step)}, at +${Date.now() - T0 - config.startOffsetMs} ms) differs:\n  @fastify/rate-limit: ${JSON.stringify(expected)}\n  ours: ${JSON.stringify(actual)}`,
        );
      }
    }
  } finally {
    await Promise.all([theirs.close(), ours.close()]);
  }
}

describe('@ratekit/fastify against @fastify/rate-limit 11.2.0 (differential, one fake clock)', () => {
  // Fastify's plugin loader times out with setTimeout: left real.
  beforeEach(() => jest.useFakeTimers({ now: T0, doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask', 'setTimeout', 'clearTimeout'] }));
  afterEach(() => jest.useRealTimers());

  it('answers random request sequences with the same status, body, headers and hook calls', async () => {
    await fc.assert(
      fc.asyncProperty(configArbitrary, stepsArbitrary, (config, steps) => compare([config, steps])),
      { numRuns: 120 },
    );
  });

  it('keeps a client that createRateLimit() peeked at as recently used in a small cache (seed 1580382044, once a failure)', async () => {
    await fc.assert(
      fc.asyncProperty(configArbitrary, stepsArbitrary, (config, steps) => compare([config, steps])),
      { numRuns: 6, seed: 1580382044, path: '5', endOnFailure: true },
    );
  });

  it('reads the clock jest fakes (a window ends on the fake clock)', async () => {
    const app = Fastify();
    await app.register(fastifyRateLimit, { max: 1, timeWindow: 10_000 });
    app.get('/', async () => 'ok');
    const statuses = [(await app.inject('/')).statusCode, (await app.inject('/')).statusCode];
    jest.advanceTimersByTime(10_000);
    statuses.push((await app.inject('/')).statusCode);
    await app.close();
    expect(statuses).toEqual([200, 429, 200]);
  });
});
