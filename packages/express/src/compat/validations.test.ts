import { memoryStore } from '@ratekit/core';
import express5, { type Request } from 'express';
import request from 'supertest';
import { MemoryStore } from './memory-store.js';
import { rateLimit } from '../rate-limit.js';
import type { Logger, RateLimitedRequest } from '../types.js';
import { VALIDATION_NAMES } from '../validation-names.js';
import { ChangeWarning, createValidations, ValidationError } from './validations.js';

const express4: typeof express5 = require('express4');

/** A logger that keeps what it gets. */
function recorder() {
  const logged: Array<{ level: 'warn' | 'error'; error: ValidationError }> = [];
  const logger: Logger = {
    warn: (error) => logged.push({ level: 'warn', error: error as ValidationError }),
    error: (error) => logged.push({ level: 'error', error: error as ValidationError }),
  };
  return { logger, logged, codes: () => logged.map((l) => l.error.code) };
}

/** A request-like object for the request checks. */
function fakeRequest(options: { ip?: string; trustProxy?: unknown; headers?: Record<string, string>; remoteAddress?: string }): Request {
  return {
    ip: options.ip,
    headers: options.headers ?? {},
    socket: { remoteAddress: options.remoteAddress ?? options.ip },
    app: { get: (name: string) => (name === 'trust proxy' ? (options.trustProxy ?? false) : undefined) },
  } as unknown as Request;
}

describe('ValidationError', () => {
  it('carries the code, the help link, and the message followed by the link', () => {
    const error = new ValidationError('ERR_ERL_EXAMPLE', 'Something is off.');
    expect(error).toMatchObject({
      name: 'ValidationError',
      code: 'ERR_ERL_EXAMPLE',
      help: 'https://express-rate-limit.github.io/ERR_ERL_EXAMPLE/',
      message: 'Something is off. See https://express-rate-limit.github.io/ERR_ERL_EXAMPLE/ for more information.',
    });
    expect(new ChangeWarning('WRN_ERL_EXAMPLE', 'x').name).toBe('ChangeWarning');
  });
});

describe('createValidations', () => {
  // Each row: the check, its arguments, the code it logs (undefined: none), and the level.
  const table: Array<[string, string, unknown[], string | undefined, ('warn' | 'error')?]> = [
    ['an undefined req.ip', 'ip', [undefined], 'ERR_ERL_UNDEFINED_IP_ADDRESS'],
    ['a req.ip with a port', 'ip', ['1.2.3.4:5678'], 'ERR_ERL_INVALID_IP_ADDRESS'],
    ['a valid req.ip', 'ip', ['2001:db8::1'], undefined],
    ['trust proxy true', 'trustProxy', [fakeRequest({ trustProxy: true })], 'ERR_ERL_PERMISSIVE_TRUST_PROXY'],
    ['trust proxy 1', 'trustProxy', [fakeRequest({ trustProxy: 1 })], undefined],
    ['X-Forwarded-For with trust proxy off', 'xForwardedForHeader', [fakeRequest({ headers: { 'x-forwarded-for': '1.2.3.4' } })], 'ERR_ERL_UNEXPECTED_X_FORWARDED_FOR'],
    ['X-Forwarded-For with trust proxy on', 'xForwardedForHeader', [fakeRequest({ trustProxy: 1, headers: { 'x-forwarded-for': '1.2.3.4' } })], undefined],
    ['a Forwarded header being ignored', 'forwardedHeader', [fakeRequest({ ip: '10.0.0.1', headers: { forwarded: 'for=1.2.3.4' } })], 'ERR_ERL_FORWARDED_HEADER'],
    ['0 hits', 'positiveHits', [0], 'ERR_ERL_INVALID_HITS'],
    ['1.5 hits', 'positiveHits', [1.5], 'ERR_ERL_INVALID_HITS'],
    ['"1" hits', 'positiveHits', ['1'], 'ERR_ERL_INVALID_HITS'],
    ['1 hit', 'positiveHits', [1], undefined],
    ['limit 0', 'limit', [0], 'WRN_ERL_MAX_ZERO', 'warn'],
    ['limit 5', 'limit', [5], undefined],
    ['draft_polli_ratelimit_headers', 'draftPolliHeaders', [true], 'WRN_ERL_DEPRECATED_DRAFT_POLLI_HEADERS', 'warn'],
    ['onLimitReached', 'onLimitReached', [() => undefined], 'WRN_ERL_DEPRECATED_ON_LIMIT_REACHED', 'warn'],
    ['an unsupported draft', 'headersDraftVersion', ['draft-5'], 'ERR_ERL_HEADERS_UNSUPPORTED_DRAFT_VERSION'],
    ['no reset time', 'headersResetTime', [undefined], 'ERR_ERL_HEADERS_NO_RESET'],
    ['a reset time', 'headersResetTime', [new Date()], undefined],
    ['an unknown option', 'knownOptions', [{ windowMS: 1 }], 'ERR_ERL_UNKNOWN_OPTION'],
    ['ratekit’s own options', 'knownOptions', [{ algorithm: 'gcra', limits: [], cost: 1, prefix: '', onStoreError: 'allow', storeTimeoutMs: 1, onError: null, now: null }], undefined],
    ['ipv6Subnet 16', 'ipv6Subnet', [16], 'ERR_ERL_IPV6_SUBNET'],
    ['ipv6Subnet 56', 'ipv6Subnet', [56], undefined],
    ['ipv6Subnet false', 'ipv6Subnet', [false], undefined],
    ['ipv6Subnet with a keyGenerator', 'ipv6SubnetOrKeyGenerator', [{ ipv6Subnet: 64, keyGenerator: () => 'k' }], 'ERR_ERL_IPV6SUBNET_OR_KEYGENERATOR'],
    ['a keyGenerator returning req.ip', 'keyGeneratorIpFallback', [(req: Request) => req.ip], 'ERR_ERL_KEY_GEN_IPV6'],
    ['a keyGenerator using ipKeyGenerator', 'keyGeneratorIpFallback', ['(req) => ipKeyGenerator(req.ip)'], undefined],
    ['windowMs 0', 'windowMs', [0], 'ERR_ERL_WINDOW_MS'],
    ['windowMs 2^31', 'windowMs', [2 ** 31], 'ERR_ERL_WINDOW_MS'],
    ['windowMs "60s"', 'windowMs', ['60s'], 'ERR_ERL_WINDOW_MS'],
    ['windowMs 60 000', 'windowMs', [60_000], undefined],
  ];

  it.each(table)('%s: %s logs %s', (_situation, check, args, code, level = 'error') => {
    const { logger, logged } = recorder();
    const validations = createValidations(true, logger) as unknown as Record<string, (...a: unknown[]) => void>;
    validations[check]!(...args);
    expect(logged.map((l) => [l.level, l.error.code])).toEqual(code === undefined ? [] : [[level, code]]);
  });

  it('names the value in the message', () => {
    const { logger, logged } = recorder();
    const validations = createValidations(true, logger);
    validations.ip('1.2.3.4:5678');
    validations.windowMs('60s');
    expect(logged.map((l) => l.error.message)).toEqual([
      "An invalid 'request.ip' (1.2.3.4:5678) was detected. Consider passing a custom 'keyGenerator' function to the rate limiter. See https://express-rate-limit.github.io/ERR_ERL_INVALID_IP_ADDRESS/ for more information.",
      'Invalid windowMs value: 60s (string), must be a number between 1 and 2147483647 when using the default MemoryStore See https://express-rate-limit.github.io/ERR_ERL_WINDOW_MS/ for more information.',
    ]);
  });

  it('runs each check once per limiter, whatever it found the first time', () => {
    const { logger, codes } = recorder();
    const validations = createValidations(true, logger);
    validations.positiveHits(1);
    validations.positiveHits(0);
    validations.limit(0);
    validations.limit(0);
    expect(codes()).toEqual(['WRN_ERL_MAX_ZERO']);
    expect(validations.enabled).toMatchObject({ positiveHits: false, limit: false });
  });

  it('validate: false turns every check off; an object turns named checks off', () => {
    const off = recorder();
    createValidations(false, off.logger).limit(0);
    expect(off.codes()).toEqual([]);
    const some = recorder();
    const validations = createValidations({ limit: false }, some.logger);
    validations.limit(0);
    validations.positiveHits(0);
    expect(some.codes()).toEqual(['ERR_ERL_INVALID_HITS']);
  });

  it('reports unknown names in validate, listing the supported ones', () => {
    const { logger, logged } = recorder();
    createValidations({ nope: true } as never, logger).validationsConfig();
    expect(logged[0]!.error.message).toBe(
      `options.validate.nope is not recognized. Supported validate options are: ${[...VALIDATION_NAMES, 'default'].join(', ')}. See https://express-rate-limit.github.io/ERR_ERL_UNKNOWN_VALIDATION/ for more information.`,
    );
  });

  describe('singleCount', () => {
    it('reports a key counted twice in one store for one request, not in two stores or under two prefixes', () => {
      const { logger, codes } = recorder();
      const req = {};
      const storeA = {};
      createValidations(true, logger).singleCount(req, storeA, 'a:k', 'k');
      createValidations(true, logger).singleCount(req, storeA, 'b:k', 'k');
      createValidations(true, logger).singleCount(req, {}, 'a:k', 'k');
      expect(codes()).toEqual([]);
      createValidations(true, logger).singleCount(req, storeA, 'a:k', 'k');
      expect(codes()).toEqual(['ERR_ERL_DOUBLE_COUNT']);
    });
  });
});

describe.each([
  ['express 4', express4],
  ['express 5', express5],
])('the checks that need a running app, on %s', (_version, express) => {
  it('ERR_ERL_CREATED_IN_REQUEST_HANDLER: a limiter built while answering a request', async () => {
    const { logger, codes } = recorder();
    const app = express();
    app.get('/', (_req, res) => {
      rateLimit({ logger });
      res.send('ok');
    });
    await request(app).get('/');
    expect(codes()).toEqual(['ERR_ERL_CREATED_IN_REQUEST_HANDLER']);
  });

  it('no ERR_ERL_CREATED_IN_REQUEST_HANDLER for a limiter built at start-up', () => {
    const { logger, codes } = recorder();
    rateLimit({ logger });
    expect(codes()).toEqual([]);
  });

  it('ERR_ERL_STORE_REUSE: one store given to two limiters', () => {
    const { logger, logged } = recorder();
    const store = new MemoryStore();
    rateLimit({ store, logger });
    rateLimit({ store, logger });
    expect(logged.map((l) => l.error.message)).toEqual([
      'A Store instance must not be shared across multiple rate limiters. Create a new instance of MemoryStore for each limiter instead. See https://express-rate-limit.github.io/ERR_ERL_STORE_REUSE/ for more information.',
    ]);
  });

  it('ERR_ERL_DOUBLE_COUNT: two limiters counting one key in stores of one class without local keys', async () => {
    const { logger, codes } = recorder();
    class SharedStore {
      hits = 0;
      increment() {
        return { totalHits: ++this.hits, resetTime: undefined };
      }
      decrement() {}
      resetKey() {}
    }
    const app = express();
    app.use(rateLimit({ store: new SharedStore(), logger }), rateLimit({ store: new SharedStore(), logger }));
    app.get('/', (_req, res) => {
      res.send('ok');
    });
    await request(app).get('/');
    expect(codes()).toEqual(['ERR_ERL_DOUBLE_COUNT']);
  });

  it("ratekit mode runs none of these checks (it stands on core's gate, and throws on bad options when built): two limiters on one ratekit store and namespace log nothing", async () => {
    const { logger, codes } = recorder();
    const store = memoryStore();
    const app = express();
    app.set('trust proxy', true);
    app.use('/same', rateLimit({ algorithm: 'gcra', store, logger }), rateLimit({ algorithm: 'gcra', store, logger }));
    app.use((req: Request, res: express5.Response) => {
      res.send(String((req as RateLimitedRequest).rateLimit?.used));
    });
    expect((await request(app).get('/same').set('forwarded', 'for=1.2.3.4')).text).toBe('2');
    expect(codes()).toEqual([]);
    store.dispose();
  });

  it('the proxy checks run on the first request, and are logged once per limiter', async () => {
    const { logger, codes } = recorder();
    const app = express();
    app.set('trust proxy', true);
    app.use(rateLimit({ logger, limit: 100 }));
    app.get('/', (_req, res) => {
      res.send('ok');
    });
    for (let i = 0; i < 3; i++) await request(app).get('/').set('forwarded', 'for=1.2.3.4');
    expect(codes()).toEqual(['ERR_ERL_PERMISSIVE_TRUST_PROXY', 'ERR_ERL_FORWARDED_HEADER']);
  });
});
