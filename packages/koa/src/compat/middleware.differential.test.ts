/**
 * Differential: koa-ratelimit 6.0.0 and our drop-in, each in its own Koa app
 * with its own `db` Map (the memory driver), get the same random requests on
 * one fake clock and must answer each with the same status, body and headers,
 * `X-RateLimit-Reset`'s fraction of a second included.
 *
 * koa-ratelimit's memory driver reads its own clock: `Date.now()` when the
 * module loads, plus `process.hrtime()` since. So it is loaded afresh for each
 * sequence, under jest's fake `Date` and `hrtime`, and the clock only moves by
 * `advanceTimersByTime` (which moves both); its clock is then exactly the fake
 * `Date.now()` ours reads. The clock starts in 2031, so a drop-in reading
 * another clock would show in `X-RateLimit-Reset`.
 */
import { Agent, createServer, get, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import Koa from 'koa';
import Koa2 from 'koa2';
import ratelimit from '../index.js';
import { windowWaitArbitrary } from '@ratekit/test-utils';

type Factory = (options: Record<string, unknown>) => Koa.Middleware;

/** Wed, 01 Jan 2031 00:00:00 GMT: far from the real clock. */
const T0 = Date.UTC(2031, 0, 1);

interface Config {
  koa: 2 | 3;
  startOffsetMs: number;
  max: number;
  duration: number;
  headers: 'default' | 'custom' | 'partial' | 'disabled';
  status: number | undefined;
  errorMessage: string | { error: string } | undefined;
  throw: boolean;
  whitelist: boolean;
  blacklist: boolean;
  namespace: string | undefined;
  unlimitedC: boolean;
}

interface Step {
  dtMs: number;
  key: string;
  listed: boolean;
}

const configArbitrary: fc.Arbitrary<Config> = fc.record({
  koa: fc.constantFrom(2 as const, 3 as const),
  startOffsetMs: fc.integer({ min: 0, max: 999 }),
  max: fc.integer({ min: 0, max: 5 }),
  duration: fc.constantFrom(1_000, 1_500, 2_000, 2_500, 60_000, 90_000),
  headers: fc.constantFrom('default' as const, 'custom' as const, 'partial' as const, 'disabled' as const),
  status: fc.constantFrom(undefined, 503),
  errorMessage: fc.constantFrom(undefined, 'Slow down.', { error: 'limited' }),
  throw: fc.boolean(),
  whitelist: fc.boolean(),
  blacklist: fc.boolean(),
  namespace: fc.constantFrom(undefined, 'api'),
  unlimitedC: fc.boolean(),
});

/** Steps for a window of `duration`: waits of 0, within the window, at its edge, and beyond it. */
function stepsArbitrary(duration: number): fc.Arbitrary<Step[]> {
  const dtMs = windowWaitArbitrary(duration);
  return fc.array(fc.record({ dtMs, key: fc.constantFrom('a', 'b', 'c'), listed: fc.boolean() }), { minLength: 20, maxLength: 40 });
}

const scenario = configArbitrary.chain((config) => fc.tuple(fc.constant(config), stepsArbitrary(config.duration)));

/** The middleware's options; `limited` collects `ctx.state.rateLimit` as `onLimited` sees it. */
function options(config: Config, limited: unknown[]): Record<string, unknown> {
  return {
    driver: 'memory',
    db: new Map(),
    max: config.max,
    duration: config.duration,
    // `false` lets a request through uncounted.
    id: (ctx: Koa.Context) => (config.unlimitedC && ctx.get('x-client') === 'c' ? false : ctx.get('x-client')),
    onLimited: (ctx: Koa.Context) => void limited.push(JSON.parse(JSON.stringify(ctx.state.rateLimit))),
    ...(config.headers === 'custom' ? { headers: { remaining: 'Rate-Remaining', reset: 'Rate-Reset', total: 'Rate-Total' } } : {}),
    ...(config.headers === 'partial' ? { headers: { remaining: 'Rate-Remaining' } } : {}),
    ...(config.headers === 'disabled' ? { disableHeader: true } : {}),
    ...(config.status === undefined ? {} : { status: config.status }),
    ...(config.errorMessage === undefined ? {} : { errorMessage: config.errorMessage }),
    throw: config.throw,
    ...(config.whitelist ? { whitelist: (ctx: Koa.Context) => ctx.get('x-listed') === '1' && ctx.get('x-client') === 'a' } : {}),
    ...(config.blacklist ? { blacklist: (ctx: Koa.Context) => ctx.get('x-listed') === '1' && ctx.get('x-client') === 'b' } : {}),
    ...(config.namespace === undefined ? {} : { namespace: config.namespace }),
  };
}

function appWith(App: typeof Koa, middleware: Koa.Middleware): Koa {
  const app = new App();
  app.silent = true;
  app.use(middleware);
  app.use((ctx) => {
    ctx.body = 'ok';
  });
  return app;
}

/** A server on an ephemeral port, handing each request to the app of the moment. */
function serverFor(): { server: Server; serve(app: Koa): void } {
  let current: ((req: IncomingMessage, res: ServerResponse) => unknown) | undefined;
  const server = createServer((req, res) => void current!(req, res));
  return {
    server,
    serve(app) {
      current = app.callback();
    },
  };
}

const agent = new Agent({ keepAlive: true });

/** GETs `/` from `server` (one kept-alive connection), answering the status, headers and body. */
function fetchFrom(server: Server, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path: '/', headers, agent }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body }));
    }).on('error', reject);
  });
}

async function answer(server: Server, limited: unknown[], step: Step) {
  const response = await fetchFrom(server, { 'x-client': step.key, ...(step.listed ? { 'x-listed': '1' } : {}) });
  // `date` is written by Node from the real clock.
  const headers = Object.entries(response.headers).filter(([name]) => name !== 'date');
  return { status: response.status, headers, body: response.body, limited: limited.splice(0) };
}

describe('@ratekit/koa against koa-ratelimit 6.0.0 (differential, one fake clock)', () => {
  const upstream = serverFor();
  const ours = serverFor();
  beforeAll(async () => {
    await Promise.all([upstream.server, ours.server].map((s) => new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))));
  });
  afterAll(async () => {
    agent.destroy();
    await Promise.all([upstream.server, ours.server].map((s) => new Promise((resolve) => s.close(resolve))));
  });
  beforeEach(() => jest.useFakeTimers({ now: T0, doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] }));
  afterEach(() => jest.useRealTimers());

  /** koa-ratelimit, loaded now: its memory driver's clock starts at the fake `Date.now()`. */
  function freshUpstream(): Factory {
    let factory: Factory | undefined;
    jest.isolateModules(() => {
      factory = require('koa-ratelimit') as Factory;
    });
    return factory!;
  }

  async function compare([config, steps]: [Config, Step[]]): Promise<void> {
    jest.setSystemTime(T0 + config.startOffsetMs);
    const App = config.koa === 2 ? Koa2 : Koa;
    const theirLimited: unknown[] = [];
    const ourLimited: unknown[] = [];
    upstream.serve(appWith(App, freshUpstream()(options(config, theirLimited))));
    ours.serve(appWith(App, (ratelimit as unknown as Factory)(options(config, ourLimited))));
    for (const [i, step] of steps.entries()) {
      jest.advanceTimersByTime(step.dtMs);
      const expected = await answer(upstream.server, theirLimited, step);
      const actual = await answer(ours.server, ourLimited, step);
      if (JSON.stringify(actual) !== JSON.stringify(expected)) {
        throw new Error(
          `Request #${i} (${JSON.stringify(step)}, at +${Date.now() - T0 - config.startOffsetMs} ms) differs:\n  koa-ratelimit: ${JSON.stringify(expected)}\n  ours: ${JSON.stringify(actual)}`,
        );
      }
    }
  }

  it('answers random request sequences with the same status, body, headers and ctx.state.rateLimit', async () => {
    await fc.assert(fc.asyncProperty(scenario, compare), { numRuns: 120 });
  });

  it('reads the clock jest fakes (X-RateLimit-Reset is in 2031)', async () => {
    ours.serve(appWith(Koa, (ratelimit as unknown as Factory)({ driver: 'memory', db: new Map(), max: 2, duration: 10_000 })));
    const response = await fetchFrom(ours.server, {});
    expect(response.headers['x-ratelimit-reset']).toBe(String(T0 / 1000 + 10));
  });
});
