/**
 * Differential: express-rate-limit 8.7.4 and our drop-in `rateLimit`, each in
 * its own Express app with its own `MemoryStore`, get the same random requests
 * on one fake clock and must answer each with the same status, body and
 * headers. The clock is jest's: both stores turn their generations on a
 * `setInterval`, which `advanceTimersByTime` fires at its instants. It starts
 * in 2031, so a drop-in reading another clock would show in the reset values.
 *
 * `skipFailedRequests` and `skipSuccessfulRequests` decrement from the
 * response's `'finish'`, unawaited; each request is compared only once its
 * `'finish'` listeners have run to the end (a `setImmediate` queued by the
 * first one runs after every promise they chain).
 *
 * Left out of generation (docs/migrating/express-rate-limit.md, "Deliberate
 * differences"): a fractional `limit` (3) and a numeric-string `windowMs`
 * (1). `validate` is off: its checks only log.
 */
import type { AddressInfo } from 'node:net';
import { Agent, createServer, get, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import express, { type ErrorRequestHandler, type Express, type Request, type RequestHandler, type Response } from 'express';
import { rateLimit as upstreamRateLimit } from 'express-rate-limit';
import fc from 'fast-check';
import { rateLimit } from '../index.js';
import { windowWaitArbitrary } from '@ratekit/test-utils';

/** Wed, 01 Jan 2031 00:00:00 GMT: far from the real clock. */
const T0 = Date.UTC(2031, 0, 1);

interface Config {
  startOffsetMs: number;
  limit: number;
  limitFunction: boolean;
  limitName: 'limit' | 'max';
  windowMs: number;
  legacyHeaders: boolean | undefined;
  legacyName: 'legacyHeaders' | 'headers';
  standardHeaders: boolean | 'draft-6' | 'draft-7' | 'draft-8' | undefined;
  identifier: string | undefined;
  statusCode: number;
  message: string | { error: string } | undefined;
  messageFunction: boolean;
  skipFailedRequests: boolean;
  skipSuccessfulRequests: boolean;
  skipHeader: boolean;
  defaultKey: boolean;
  successUnder300: boolean;
  retryAfter: number | undefined;
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
  limitName: fc.constantFrom('limit' as const, 'max' as const),
  windowMs: fc.constantFrom(1_000, 1_500, 2_000, 2_500, 60_000, 90_000),
  legacyHeaders: fc.constantFrom(undefined, true, false),
  legacyName: fc.constantFrom('legacyHeaders' as const, 'headers' as const),
  standardHeaders: fc.constantFrom(undefined, false, true, 'draft-6' as const, 'draft-7' as const, 'draft-8' as const),
  identifier: fc.constantFrom(undefined, 'api'),
  statusCode: fc.constantFrom(429, 503),
  message: fc.constantFrom(undefined, 'slow down', { error: 'limited' }),
  messageFunction: fc.boolean(),
  skipFailedRequests: fc.boolean(),
  skipSuccessfulRequests: fc.boolean(),
  skipHeader: fc.boolean(),
  defaultKey: fc.boolean(),
  successUnder300: fc.boolean(),
  retryAfter: fc.constantFrom(undefined, 30),
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
    [config.limitName]: config.limitFunction ? async (req: Request) => config.limit + Number(req.get('x-client') === 'c') : config.limit,
    windowMs: config.windowMs,
    ...(config.legacyHeaders === undefined ? {} : { [config.legacyName]: config.legacyHeaders }),
    ...(config.standardHeaders === undefined ? {} : { standardHeaders: config.standardHeaders }),
    ...(config.identifier === undefined ? {} : { identifier: config.identifier }),
    statusCode: config.statusCode,
    ...(config.messageFunction
      ? { message: async (req: Request) => ({ rateLimit: (req as Request & { rateLimit?: unknown }).rateLimit }) }
      : config.message === undefined
        ? {}
        : { message: config.message }),
    skipFailedRequests: config.skipFailedRequests,
    skipSuccessfulRequests: config.skipSuccessfulRequests,
    validate: false, // its checks only log (limit: 0's WRN_ERL_MAX_ZERO); compat/validations.test.ts tests ours
    // The default key is the IP, 127.0.0.1 for every request here.
    ...(config.defaultKey ? {} : { keyGenerator: (req: Request) => req.get('x-client') ?? '' }),
    ...(config.successUnder300 ? { requestWasSuccessful: (_req: Request, res: Response) => res.statusCode < 300 } : {}),
    ...(config.retryAfter === undefined ? {} : { retryAfter: config.retryAfter }),
    ...(config.skipHeader ? { skip: (req: Request) => req.get('x-skip') === '1' } : {}),
  };
}

/** An app with `limiter` before `/ok` (200), `/fail` (400), `/info` (`req.rateLimit`), `/throw` (500), `/store` and `/reset`; `finished` resolves once a response's `'finish'` listeners are done. */
function appWith(limiter: RequestHandler): { app: Express; finished: () => Promise<void> } {
  let done: Promise<void> = Promise.resolve();
  const app = express();
  app.use((_req, res, next) => {
    done = new Promise((resolve) => res.once('finish', () => setImmediate(resolve)));
    next();
  });
  app.use(limiter);
  app.get('/ok', (_req, res) => void res.send('ok'));
  app.get('/fail', (_req, res) => void res.status(400).send('failed'));
  app.get('/info', (req, res) => void res.json((req as Request & { rateLimit?: unknown }).rateLimit));
  app.get('/throw', (_req, _res, next) => next(new Error('broken')));
  // The limiter's view of another client (b), and a reset of it.
  const access = limiter as RequestHandler & { getKey(key: string): unknown; resetKey(key: string): unknown };
  app.get('/store', async (_req, res) => void res.json({ b: (await access.getKey('b')) ?? null }));
  app.get('/reset', async (_req, res) => {
    await access.resetKey('b');
    res.send('reset');
  });
  app.use(((_error, _req, res, _next) => void res.status(500).send('broken')) as ErrorRequestHandler); // Express's default logs it
  return { app, finished: () => done };
}

/** A server on an ephemeral port, handing each request to the app of the moment. */
function serverFor(): { server: Server; serve(app: Express): void } {
  let current: Express | undefined;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => void current!(req, res));
  return {
    server,
    serve(app) {
      current = app;
    },
  };
}

const agent = new Agent({ keepAlive: true });

/** GETs `path` from `server` (one kept-alive connection), answering the status, headers and body. */
function fetchFrom(server: Server, path: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path, headers, agent }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body }));
    }).on('error', reject);
  });
}

async function answer(server: Server, target: { finished: () => Promise<void> }, step: Step) {
  const response = await fetchFrom(server, step.path, { 'x-client': step.key, ...(step.skip ? { 'x-skip': '1' } : {}) });
  await target.finished();
  const headers = Object.entries(response.headers)
    // Node writes its own `Date` from the real clock, unless the legacy headers write it.
    .filter(([name]) => name !== 'date' || 'x-ratelimit-reset' in response.headers)
    .sort(([a], [b]) => a.localeCompare(b));
  return { status: response.status, headers, body: response.body };
}

describe('rateLimit against express-rate-limit 8.7.4 (differential, one fake clock)', () => {
  const upstream = serverFor();
  const ours = serverFor();
  beforeAll(async () => {
    await Promise.all([upstream.server, ours.server].map((s) => new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))));
    expect((upstream.server.address() as AddressInfo).port).toBeGreaterThan(0);
  });
  afterAll(async () => {
    agent.destroy();
    await Promise.all([upstream.server, ours.server].map((s) => new Promise((resolve) => s.close(resolve))));
  });
  beforeEach(() => jest.useFakeTimers({ now: T0, doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] }));
  afterEach(() => jest.useRealTimers());

  async function compare([config, steps]: [Config, Step[]]): Promise<void> {
    jest.clearAllTimers();
    jest.setSystemTime(T0 + config.startOffsetMs);
    const theirApp = appWith(upstreamRateLimit(options(config)));
    const ourApp = appWith(rateLimit(options(config)));
    upstream.serve(theirApp.app);
    ours.serve(ourApp.app);
    for (const [i, step] of steps.entries()) {
      jest.advanceTimersByTime(step.dtMs);
      const expected = await answer(upstream.server, theirApp, step);
      const actual = await answer(ours.server, ourApp, step);
      if (JSON.stringify(actual) !== JSON.stringify(expected)) {
        throw new Error(
          `Request #${i} (${JSON.stringify(step)}, at +${Date.now() - T0 - config.startOffsetMs} ms) differs:\n  express-rate-limit: ${JSON.stringify(expected)}\n  ours: ${JSON.stringify(actual)}`,
        );
      }
    }
    jest.clearAllTimers(); // both stores' intervals
  }

  it('answers random request sequences with the same status, body and headers', async () => {
    await fc.assert(fc.asyncProperty(scenario, compare), { numRuns: 80 });
  });

  it('reads the clock jest fakes (X-RateLimit-Reset is in 2031)', async () => {
    const app = appWith(rateLimit({ limit: 2, windowMs: 10_000, keyGenerator: () => 'k' }));
    ours.serve(app.app);
    const response = await fetchFrom(ours.server, '/ok', {});
    expect(response.headers['x-ratelimit-reset']).toBe(String(T0 / 1000 + 10));
  });
});
