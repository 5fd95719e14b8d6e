/**
 * "An app written for express-rate-limit v8 runs unchanged with the import
 * swapped": each scenario below is an express-rate-limit-style app, built
 * once with the real `express-rate-limit` package (devDependency, 8.7.4) and
 * once with this package, then sent the same requests at the same instants.
 * Status codes, headers (every name, value and position; only the value of
 * `Date` is masked) and bodies must be byte-identical, and the statuses must
 * be the ones express-rate-limit documents.
 */
import * as erlModule from 'express-rate-limit';
import express5, { type ErrorRequestHandler, type Express, type Request, type Response } from 'express';
import request from 'supertest';
import * as ours from './index.js';

// Express 4 is installed under an alias; its API is the same for what these tests use.
const express4: typeof express5 = require('express4');

/** Sat, 21 Nov 2026 12:00:00 GMT. Both libraries read `Date.now()`, which is faked (and only it). */
const T0 = 1_795_262_400_000;
beforeEach(() => {
  jest.useFakeTimers({
    now: T0,
    doNotFake: [
      'hrtime',
      'nextTick',
      'performance',
      'queueMicrotask',
      'requestAnimationFrame',
      'cancelAnimationFrame',
      'requestIdleCallback',
      'cancelIdleCallback',
      'setImmediate',
      'clearImmediate',
      'setInterval',
      'clearInterval',
      'setTimeout',
      'clearTimeout',
    ],
  });
});
afterEach(() => {
  jest.useRealTimers();
});

/** What a scenario builds its app from: one library or the other, under the same names. */
interface Library {
  readonly name: string;
  readonly rateLimit: (options?: Record<string, unknown>) => express5.RequestHandler & { resetKey(key: string): unknown; getKey(key: string): unknown };
  readonly ipKeyGenerator: (ip: string, subnet?: number | false) => string;
  readonly MemoryStore: new () => object;
}

const erl = erlModule as unknown as Library & { default: Library['rateLimit'] };
const LIBRARIES: Library[] = [
  { name: 'express-rate-limit', rateLimit: erl.rateLimit, ipKeyGenerator: erl.ipKeyGenerator, MemoryStore: erl.MemoryStore },
  { name: '@ratekit/express', rateLimit: ours.rateLimit as never, ipKeyGenerator: ours.ipKeyGenerator, MemoryStore: ours.MemoryStore },
];

const quiet = { warn: () => undefined, error: () => undefined };

/** One request of a scenario: at `at` ms after T0. */
interface Step {
  readonly at?: number;
  readonly path?: string;
  readonly method?: 'get' | 'post';
  readonly headers?: Record<string, string>;
}

interface Scenario {
  readonly name: string;
  /** Mounts the limiters (built with `lib`) on a fresh app. */
  readonly mount: (app: Express, lib: Library) => void;
  readonly steps: readonly Step[];
  /** The statuses express-rate-limit's documentation leads one to expect. */
  readonly statuses: readonly number[];
}

/** A store that counts but cannot tell when its window resets. */
class NoResetStore {
  hits = new Map<string, number>();
  increment(key: string) {
    const totalHits = (this.hits.get(key) ?? 0) + 1;
    this.hits.set(key, totalHits);
    return { totalHits, resetTime: undefined };
  }
  decrement(key: string) {
    this.hits.set(key, (this.hits.get(key) ?? 1) - 1);
  }
  resetKey(key: string) {
    this.hits.delete(key);
  }
}

/** An express-rate-limit ≤ 5 store: `incr(key, callback)`. */
class CallbackStore {
  hits = new Map<string, number>();
  incr(key: string, callback: (error: Error | undefined, totalHits: number, resetTime: Date | undefined) => void) {
    const totalHits = (this.hits.get(key) ?? 0) + 1;
    this.hits.set(key, totalHits);
    callback(undefined, totalHits, new Date(T0 + 30_000));
  }
  decrement(key: string) {
    this.hits.set(key, (this.hits.get(key) ?? 1) - 1);
  }
  resetKey(key: string) {
    this.hits.delete(key);
  }
}

/** A store whose increment always fails. */
class BrokenStore {
  increment(): never {
    throw new Error('store is down');
  }
  decrement() {}
  resetKey() {}
}

const info = (req: Request, res: Response) => {
  res.json((req as Request & { rateLimit?: unknown }).rateLimit ?? null);
};
const times = (n: number, step: Step = {}): Step[] => Array.from({ length: n }, () => step);

const SCENARIOS: Scenario[] = [
  // Options of the wrong type, taken as express-rate-limit takes them: used as given. (Those it takes and
  // then fails with on every request, or writes as NaN in a header, are refused when built:
  // compat/failing-options.test.ts.)
  ...(
    [
      ["legacyHeaders 'yes': taken for its truth", { legacyHeaders: 'yes' }, [200, 200, 429]],
      ["limit '2': compared as express-rate-limit compares it", { limit: '2' }, [200, 200, 429]],
      ['limit -1: every request refused', { limit: -1 }, [429, 429, 429]],
      ["requestPropertyName '': the info goes on req['']", { requestPropertyName: '' }, [200, 200, 429]],
      ['retryAfter -1: sent as given', { retryAfter: -1 }, [200, 200, 429]],
      ['standardHeaders 6: an unsupported draft, no standard headers', { standardHeaders: 6 }, [200, 200, 429]],
      ["standardHeaders 'draft-9': unknown to express-rate-limit v8, no standard headers", { standardHeaders: 'draft-9' }, [200, 200, 429]],
      ["validate 'yes': spread into the checks as express-rate-limit spreads it", { validate: 'yes' }, [200, 200, 429]],
      ['a keyGenerator returning undefined: every request under one key', { keyGenerator: () => undefined }, [200, 200, 429]],
      ['a keyGenerator returning null: every request under one key', { keyGenerator: () => null }, [200, 200, 429]],
    ] as Array<[string, Record<string, unknown>, number[]]>
  ).map(([name, options, statuses]): Scenario => ({
    name: `a misconfiguration, ${name}`,
    mount: (app, lib) => {
      app.use(lib.rateLimit({ limit: 2, ...options, logger: quiet }));
      app.use(((error, _req, res, _next) => {
        res.status(500).send(`error: ${(error as Error).name}`);
      }) as ErrorRequestHandler);
    },
    steps: times(3),
    statuses,
  })),
  {
    name: 'the defaults: 5 per minute, legacy headers, the default 429 message',
    mount: (app, lib) => app.use(lib.rateLimit({ logger: quiet })),
    steps: times(7),
    statuses: [200, 200, 200, 200, 200, 429, 429],
  },
  {
    name: 'windowMs and limit: the window resets',
    mount: (app, lib) => app.use(lib.rateLimit({ windowMs: 10_000, limit: 2, logger: quiet })),
    steps: [{}, { at: 4_000 }, { at: 9_999 }, { at: 10_000 }, { at: 10_001 }],
    statuses: [200, 200, 429, 200, 200],
  },
  {
    name: 'standardHeaders: true (draft-6) beside the legacy headers',
    mount: (app, lib) => app.use(lib.rateLimit({ limit: 3, standardHeaders: true, logger: quiet })),
    steps: [{}, { at: 15_500 }, { at: 15_500 }, { at: 59_001 }],
    statuses: [200, 200, 200, 429],
  },
  {
    name: "standardHeaders 'draft-7' only, 100 per 15 minutes",
    mount: (app, lib) => app.use(lib.rateLimit({ windowMs: 15 * 60_000, limit: 100, standardHeaders: 'draft-7', legacyHeaders: false, logger: quiet })),
    steps: [{}, { at: 61_000 }],
    statuses: [200, 200],
  },
  {
    name: "standardHeaders 'draft-7', limit 1: the refusal and Retry-After",
    mount: (app, lib) => app.use(lib.rateLimit({ limit: 1, standardHeaders: 'draft-7', legacyHeaders: false, logger: quiet })),
    steps: [{}, { at: 1_200 }],
    statuses: [200, 429],
  },
  {
    name: "standardHeaders 'draft-8': default policy name and partition key",
    mount: (app, lib) => app.use(lib.rateLimit({ windowMs: 15 * 60_000, limit: 100, standardHeaders: 'draft-8', legacyHeaders: false, logger: quiet })),
    steps: [{}, { at: 1_000 }],
    statuses: [200, 200],
  },
  {
    name: "standardHeaders 'draft-8' with a 90 s window and a fractional policy name",
    mount: (app, lib) => app.use(lib.rateLimit({ windowMs: 90_000, limit: 1, standardHeaders: 'draft-8', logger: quiet })),
    steps: [{}, { at: 30_000 }],
    statuses: [200, 429],
  },
  {
    name: "two stacked 'draft-8' limiters, one with an identifier",
    mount: (app, lib) => {
      app.use(lib.rateLimit({ windowMs: 1_000, limit: 10, standardHeaders: 'draft-8', legacyHeaders: false, logger: quiet }));
      app.use(lib.rateLimit({ windowMs: 90 * 60_000, limit: 2, standardHeaders: 'draft-8', legacyHeaders: false, identifier: 'burst', logger: quiet }));
    },
    steps: times(4),
    statuses: [200, 200, 429, 429],
  },
  {
    name: "an identifier function (awaited) in 'draft-8'",
    mount: (app, lib) => app.use(lib.rateLimit({ limit: 2, standardHeaders: 'draft-8', identifier: async (req: Request) => `per-${req.method.toLowerCase()}`, logger: quiet })),
    steps: times(3),
    statuses: [200, 200, 429],
  },
  {
    name: 'a JSON message and a custom status code',
    mount: (app, lib) => app.use(lib.rateLimit({ limit: 1, statusCode: 503, message: { error: 'slow down', retry: true }, logger: quiet })),
    steps: times(2),
    statuses: [200, 503],
  },
  {
    name: 'an async message function of the request',
    mount: (app, lib) => app.use(lib.rateLimit({ limit: 1, message: async (req: Request) => `too many requests to ${req.path}`, logger: quiet })),
    steps: [{ path: '/a' }, { path: '/b' }],
    statuses: [200, 429],
  },
  {
    name: 'a custom handler reading req.rateLimit and the options used',
    mount: (app, lib) =>
      app.use(
        lib.rateLimit({
          limit: 2,
          handler: (req: Request, res: Response, _next: unknown, options: { statusCode: number; message: unknown; windowMs: number; limit: number }) => {
            res.status(options.statusCode).json({ info: (req as Request & { rateLimit?: unknown }).rateLimit, message: options.message, windowMs: options.windowMs, limit: options.limit });
          },
          logger: quiet,
        }),
      ),
    steps: times(4),
    statuses: [200, 200, 429, 429],
  },
  {
    name: 'req.rateLimit as JSON, refused requests still counted (used rises past limit)',
    mount: (app, lib) => {
      app.use(lib.rateLimit({ limit: 1, handler: (req: Request, res: Response) => info(req, res.status(429)), logger: quiet }));
      app.get('/info', info);
    },
    steps: times(4, { path: '/info' }),
    statuses: [200, 429, 429, 429],
  },
  {
    name: 'requestPropertyName',
    mount: (app, lib) => {
      app.use(lib.rateLimit({ requestPropertyName: 'quota', logger: quiet }));
      app.get('/info', (req, res) => {
        res.json({ quota: (req as Request & { quota?: unknown }).quota, rateLimit: (req as Request & { rateLimit?: unknown }).rateLimit ?? null });
      });
    },
    steps: times(2, { path: '/info' }),
    statuses: [200, 200],
  },
  {
    name: 'limit as an async function of the request, and the deprecated max',
    mount: (app, lib) => {
      app.use('/fn', lib.rateLimit({ limit: async (req: Request) => (req.get('x-plan') === 'pro' ? 3 : 1), logger: quiet }));
      app.use('/max', lib.rateLimit({ max: 1, logger: quiet }));
    },
    steps: [{ path: '/fn', headers: { 'x-plan': 'pro' } }, { path: '/fn', headers: { 'x-plan': 'pro' } }, { path: '/fn' }, { path: '/max' }, { path: '/max' }],
    statuses: [200, 200, 429, 200, 429],
  },
  {
    name: 'a keyGenerator from a header, with ipKeyGenerator as the fallback',
    mount: (app, lib) => {
      app.use(lib.rateLimit({ limit: 1, keyGenerator: (req: Request) => req.get('x-api-key') ?? lib.ipKeyGenerator(req.ip ?? ''), logger: quiet }));
      app.get('/info', info);
    },
    steps: [{ path: '/info', headers: { 'x-api-key': 'alice' } }, { path: '/info', headers: { 'x-api-key': 'bob' } }, { path: '/info', headers: { 'x-api-key': 'alice' } }, { path: '/info' }],
    statuses: [200, 200, 429, 200],
  },
  {
    name: 'trust proxy with IPv6 clients: keys grouped by /56, and ipv6Subnet 64',
    mount: (app, lib) => {
      app.set('trust proxy', 'loopback');
      app.use('/56', lib.rateLimit({ limit: 1, logger: quiet }));
      app.use('/64', lib.rateLimit({ limit: 1, ipv6Subnet: 64, logger: quiet }));
      app.get('/56', info);
      app.get('/64', info);
    },
    steps: [
      { path: '/56', headers: { 'x-forwarded-for': '2001:db8::1' } },
      { path: '/56', headers: { 'x-forwarded-for': '2001:db8:0:ff::1' } },
      { path: '/64', headers: { 'x-forwarded-for': '2001:db8::1' } },
      { path: '/64', headers: { 'x-forwarded-for': '2001:db8:0:ff::1' } },
    ],
    statuses: [200, 429, 200, 200],
  },
  {
    name: 'skip: skipped requests get no count and no headers',
    mount: (app, lib) => app.use(lib.rateLimit({ limit: 1, skip: (req: Request) => req.get('x-internal') === '1', logger: quiet })),
    steps: [{ headers: { 'x-internal': '1' } }, { headers: { 'x-internal': '1' } }, {}, {}],
    statuses: [200, 200, 200, 429],
  },
  {
    name: 'skipFailedRequests: failed responses are un-counted',
    mount: (app, lib) => {
      app.use(lib.rateLimit({ limit: 2, skipFailedRequests: true, logger: quiet }));
      app.get('/fail', (_req, res) => {
        res.status(500).send('failed');
      });
    },
    steps: [{ path: '/fail' }, { path: '/fail' }, { path: '/fail' }, {}, {}, {}],
    statuses: [500, 500, 500, 200, 200, 429],
  },
  {
    name: 'skipSuccessfulRequests: only failures count',
    mount: (app, lib) => {
      app.use(lib.rateLimit({ limit: 1, skipSuccessfulRequests: true, logger: quiet }));
      app.get('/fail', (_req, res) => {
        res.status(400).send('bad');
      });
    },
    steps: [{}, {}, {}, { path: '/fail' }, { path: '/fail' }, {}],
    statuses: [200, 200, 200, 400, 429, 429],
  },
  {
    name: 'both header sets off: a bare 429',
    mount: (app, lib) => app.use(lib.rateLimit({ limit: 1, legacyHeaders: false, standardHeaders: false, logger: quiet })),
    steps: times(2),
    statuses: [200, 429],
  },
  {
    name: 'the deprecated headers: false',
    mount: (app, lib) => app.use(lib.rateLimit({ limit: 1, headers: false, logger: quiet })),
    steps: times(2),
    statuses: [200, 429],
  },
  {
    name: 'retryAfter overrides the Retry-After value (8.7)',
    mount: (app, lib) => app.use(lib.rateLimit({ limit: 1, retryAfter: (req: Request) => (req.get('x-vip') ? 5 : 120), logger: quiet })),
    steps: [{}, {}, { headers: { 'x-vip': '1' } }],
    statuses: [200, 429, 429],
  },
  {
    name: 'a store without reset times, legacy headers and draft-7',
    mount: (app, lib) => app.use(lib.rateLimit({ limit: 1, standardHeaders: 'draft-7', store: new NoResetStore(), logger: quiet })),
    steps: times(2),
    statuses: [200, 429],
  },
  {
    name: 'a legacy callback store (incr)',
    mount: (app, lib) => app.use(lib.rateLimit({ limit: 1, standardHeaders: 'draft-6', store: new CallbackStore(), logger: quiet })),
    steps: times(2),
    statuses: [200, 429],
  },
  {
    name: 'a MemoryStore passed explicitly',
    mount: (app, lib) => app.use(lib.rateLimit({ limit: 1, store: new lib.MemoryStore(), logger: quiet })),
    steps: [{}, {}, { at: 60_000 }],
    statuses: [200, 429, 200],
  },
  {
    name: 'passOnStoreError: true lets requests through a failing store, without headers',
    mount: (app, lib) => app.use(lib.rateLimit({ store: new BrokenStore(), passOnStoreError: true, logger: quiet })),
    steps: times(2),
    statuses: [200, 200],
  },
  {
    name: 'a failing store without passOnStoreError reaches the error handler',
    mount: (app, lib) => app.use(lib.rateLimit({ store: new BrokenStore(), logger: quiet })),
    steps: times(1),
    statuses: [500],
  },
  {
    name: 'limit 0 refuses everything',
    mount: (app, lib) => app.use(lib.rateLimit({ limit: 0, standardHeaders: 'draft-8', logger: quiet })),
    steps: times(2),
    statuses: [429, 429],
  },
  {
    name: 'a limiter on one route only, beside an unlimited one',
    mount: (app, lib) => {
      app.post('/login', lib.rateLimit({ windowMs: 15 * 60_000, limit: 1, message: 'Too many login attempts', standardHeaders: 'draft-6', logger: quiet }), (_req, res) => {
        res.status(201).json({ ok: true });
      });
    },
    steps: [{ method: 'post', path: '/login' }, { path: '/' }, { method: 'post', path: '/login' }, { path: '/' }],
    statuses: [201, 200, 429, 200],
  },
];

/** Turns errors passed to next() into a 500 the comparison can read. */
const errorHandler: ErrorRequestHandler = (err, _req, res, _next) => {
  res.status(500).json({ error: (err as Error).message });
};

/** A response as compared: status, every raw header (Date's value masked), body. */
interface Seen {
  status: number;
  headers: string[];
  body: string;
}

async function run(scenario: Scenario, lib: Library, express: typeof express5): Promise<Seen[]> {
  jest.setSystemTime(T0);
  const app = express();
  scenario.mount(app, lib);
  app.use((_req: Request, res: Response) => {
    res.send('ok');
  });
  app.use(errorHandler);
  const seen: Seen[] = [];
  for (const step of scenario.steps) {
    jest.setSystemTime(T0 + (step.at ?? 0));
    const agent = request(app);
    const res = await agent[step.method ?? 'get'](step.path ?? '/').set(step.headers ?? {});
    const raw = (res as unknown as { res: { rawHeaders: string[] } }).res.rawHeaders;
    const headers: string[] = [];
    for (let i = 0; i < raw.length; i += 2) headers.push(`${raw[i]}: ${raw[i]!.toLowerCase() === 'date' ? '<date>' : raw[i + 1]}`);
    seen.push({ status: res.status, headers, body: res.text });
    // Let un-count hooks (skip…Requests) settle, as they would between real requests.
    await new Promise((resolve) => setImmediate(resolve));
  }
  return seen;
}

describe.each([
  ['express 4', express4],
  ['express 5', express5],
])('@ratekit/express as a drop-in for express-rate-limit on %s', (_version, express) => {
  describe.each(SCENARIOS.map((s) => [s.name, s] as const))('%s', (_name, scenario) => {
    it('answers with the statuses express-rate-limit documents, and the same headers and bodies byte for byte', async () => {
      const reference = await run(scenario, LIBRARIES[0]!, express);
      const candidate = await run(scenario, LIBRARIES[1]!, express);
      expect(reference.map((r) => r.status)).toEqual(scenario.statuses);
      expect(candidate).toEqual(reference);
    });
  });
});

describe('the export shape', () => {
  it('has every runtime export express-rate-limit has, of the same kind', () => {
    const names = Object.keys(erlModule).filter((name) => name !== '__esModule');
    expect(names.sort()).toEqual(['DAY', 'HOUR', 'MINUTE', 'MemoryStore', 'SECOND', 'default', 'ipKeyGenerator', 'rateLimit']);
    for (const name of names) expect([name, typeof (ours as Record<string, unknown>)[name]]).toEqual([name, typeof (erlModule as Record<string, unknown>)[name]]);
  });

  it('exports rateLimit as the default export too', () => {
    expect(ours.default).toBe(ours.rateLimit);
  });

  it('has the same time constants', () => {
    expect([ours.SECOND, ours.MINUTE, ours.HOUR, ours.DAY]).toEqual([erlModule.SECOND, erlModule.MINUTE, erlModule.HOUR, erlModule.DAY]);
  });

  it('has the same ipKeyGenerator', () => {
    for (const ip of ['203.0.113.7', '::ffff:1.2.3.4', '::1.2.3.4', '2001:db8:1234:5678::1', '::1', '0123:4567:89ab:cdef::1']) {
      for (const subnet of [56, 64, 48, false] as const) expect([ip, subnet, ours.ipKeyGenerator(ip, subnet)]).toEqual([ip, subnet, erl.ipKeyGenerator(ip, subnet)]);
    }
  });
});

describe('the configuration checks, against express-rate-limit', () => {
  /** What a logger saw, as comparable text. */
  function recorder() {
    const seen: string[] = [];
    const note = (level: string) => (error: unknown, message?: string) => {
      const e = error as { name?: string; code?: string; help?: string; message?: string };
      seen.push(`${level} ${e.name} ${e.code} ${e.help} ${e.message}${message === undefined ? '' : ` | ${message}`}`);
    };
    return { logger: { warn: note('warn'), error: note('error') }, seen };
  }

  // Each row: the options (the logger is added), and requests to send.
  const table: Array<{ situation: string; options: Record<string, unknown>; steps: Step[]; setup?: (app: Express) => void }> = [
    { situation: 'an unknown option', options: { windowMS: 1_000 }, steps: [] },
    { situation: 'a deprecated draft_polli_ratelimit_headers', options: { draft_polli_ratelimit_headers: true }, steps: [] },
    { situation: 'a deprecated onLimitReached', options: { onLimitReached: () => undefined }, steps: [] },
    { situation: 'an unknown validate name', options: { validate: { ip: false, nope: true } }, steps: [] },
    { situation: 'ipv6Subnet out of range', options: { ipv6Subnet: 100 }, steps: [] },
    { situation: 'ipv6Subnet beside a keyGenerator', options: { ipv6Subnet: 64, keyGenerator: () => 'k' }, steps: [] },
    { situation: 'a keyGenerator reading req.ip without ipKeyGenerator', options: { keyGenerator: (req: Request) => req.ip ?? '' }, steps: [] },
    { situation: 'windowMs beyond setTimeout', options: { windowMs: 2 ** 31 }, steps: [] },
    { situation: 'limit 0', options: { limit: 0 }, steps: [{}] },
    { situation: 'trust proxy true', options: {}, steps: [{}], setup: (app) => app.set('trust proxy', true) },
    { situation: 'X-Forwarded-For without trust proxy', options: {}, steps: [{ headers: { 'x-forwarded-for': '198.51.100.1' } }] },
    { situation: 'a Forwarded header', options: {}, steps: [{ headers: { forwarded: 'for=198.51.100.1' } }] },
    { situation: 'an unsupported draft', options: { standardHeaders: 'draft-5' }, steps: [{}] },
    { situation: 'draft-7 without reset times', options: { standardHeaders: 'draft-7', store: 'no-reset' }, steps: [{}] },
    { situation: 'a store answering 0 hits', options: { store: 'zero' }, steps: [{}] },
    { situation: 'a store failing with passOnStoreError', options: { store: 'broken', passOnStoreError: true }, steps: [{}] },
    { situation: 'the same MemoryStore class counting one key twice', options: { stacked: true, store: 'no-reset' }, steps: [{}] },
    { situation: 'every check off', options: { validate: false, windowMS: 1, limit: 0 }, steps: [{ headers: { 'x-forwarded-for': '1.2.3.4' } }] },
  ];

  it.each(table)('$situation: the same errors and warnings, logged the same way', async ({ options, steps, setup }) => {
    const outputs: string[][] = [];
    for (const lib of LIBRARIES) {
      const { logger, seen } = recorder();
      const app = express5();
      setup?.(app);
      const storeOf = () =>
        options['store'] === 'no-reset'
          ? new NoResetStore()
          : options['store'] === 'broken'
            ? new BrokenStore()
            : options['store'] === 'zero'
              ? Object.assign(new NoResetStore(), { increment: () => ({ totalHits: 0, resetTime: undefined }) })
              : undefined;
      const { stacked, ...rest } = options;
      const limiterOptions = { ...rest, store: storeOf(), logger };
      app.use(lib.rateLimit(limiterOptions));
      if (stacked) app.use(lib.rateLimit({ ...limiterOptions, store: storeOf() }));
      app.use((_req: Request, res: Response) => {
        res.send('ok');
      });
      app.use(errorHandler);
      for (const step of steps)
        await request(app)
          .get('/')
          .set(step.headers ?? {});
      outputs.push(seen);
    }
    if (process.env['SHOW_LOGS']) console.log(outputs[0]);
    // Every row but the last makes express-rate-limit log something; the last turns every check off.
    expect(outputs[0]!.length > 0).toBe(options['validate'] !== false);
    expect(outputs[1]).toEqual(outputs[0]);
  });

  it('logs each check once per limiter', async () => {
    const { logger, seen } = (() => {
      const list: string[] = [];
      return { logger: { warn: () => undefined, error: (e: unknown) => list.push((e as { code: string }).code) }, seen: list };
    })();
    const app = express5();
    app.use(ours.rateLimit({ logger }));
    app.use((_req: Request, res: Response) => {
      res.send('ok');
    });
    for (let i = 0; i < 3; i++) await request(app).get('/').set('x-forwarded-for', '198.51.100.1');
    expect(seen).toEqual(['ERR_ERL_UNEXPECTED_X_FORWARDED_FOR']);
  });
});
