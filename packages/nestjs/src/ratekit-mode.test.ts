import { Controller, Get, type INestApplication, Module, type Type } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { memoryStore, RateKitOptionError, type RateLimitStore } from '@ratekit/core';
import { Throttle } from './decorators.js';
import { ThrottlerGuard } from './guard.js';
import { ThrottlerModule } from './module.js';
import type { ThrottlerModuleOptions } from './options.js';
import { get, PLATFORMS, startApp } from './test-app.js';
import { seconds } from './utilities.js';

@Controller()
class ApiController {
  @Get('read')
  read() {
    return { ok: true };
  }

  @Throttle({ default: { limit: 10, ttl: seconds(60), algorithm: 'token-bucket', burst: 3 } })
  @Get('bucket')
  bucket() {
    return { ok: true };
  }

  @Throttle({ default: { limit: 2, ttl: seconds(10), algorithm: 'sliding-window' } })
  @Get('window')
  window() {
    return { ok: true };
  }

  @Throttle({ default: { limit: 2, ttl: 200, blockDurationMs: 60_000 } })
  @Get('blocking')
  blocking() {
    return { ok: true };
  }
}

function appModule(options: ThrottlerModuleOptions): Type<unknown> {
  @Module({
    imports: [ThrottlerModule.forRoot(options)],
    controllers: [ApiController],
    providers: [{ provide: APP_GUARD, useClass: ThrottlerGuard }],
  })
  class AppModule {}
  return AppModule;
}

/** A store whose every call fails, or never answers. */
function brokenStore(kind: 'fails' | 'hangs'): RateLimitStore {
  return {
    name: 'broken',
    shared: true,
    clock: 'server',
    evaluate: () => (kind === 'fails' ? Promise.reject(new Error('connection refused')) : new Promise(() => {})),
    resetKey: () => undefined,
  };
}

describe.each(PLATFORMS)('ratekit options on %s', (_name, platform) => {
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });
  const start = async (options: ThrottlerModuleOptions) => {
    const started = await startApp(appModule(options), platform);
    app = started.app;
    return started.url;
  };

  it('algorithm and burst on the decorator: a token bucket of 3 refuses the 4th request at once', async () => {
    const url = await start({ throttlers: [{ limit: 100, ttl: seconds(60) }], store: memoryStore({ pruneIntervalMs: 0 }) });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await get(`${url}/bucket`)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it('a route naming another algorithm than the module throttler’s does not inherit its burst: a sliding window of 2', async () => {
    const url = await start({ throttlers: [{ ttl: seconds(1), limit: 10, algorithm: 'token-bucket', burst: 20 }] });
    const first = await get(`${url}/window`);
    expect(first.status).toBe(200);
    expect(first.headers).toMatchObject({ 'x-ratelimit-limit': '2', 'x-ratelimit-remaining': '1' });
    expect((await get(`${url}/window`)).status).toBe(200);
    expect((await get(`${url}/window`)).status).toBe(429);
    // The module's bucket of 20 still holds on the other routes.
    expect((await get(`${url}/read`)).headers['x-ratelimit-remaining']).toBe('19');
  });

  it('X-RateLimit-Limit is the capacity (a bucket’s burst), never below X-RateLimit-Remaining', async () => {
    const url = await start({ throttlers: [{ ttl: seconds(1), limit: 10, algorithm: 'token-bucket', burst: 20 }] });
    const first = await get(`${url}/read`);
    expect(first.headers).toMatchObject({ 'x-ratelimit-limit': '20', 'x-ratelimit-remaining': '19' });
    for (let i = 1; i < 20; i++) {
      const { headers } = await get(`${url}/read`);
      expect(Number(headers['x-ratelimit-limit'])).toBeGreaterThanOrEqual(Number(headers['x-ratelimit-remaining']));
    }
    // The route's own bucket: burst 3, refilled at 10 per minute.
    expect((await get(`${url}/bucket`)).headers).toMatchObject({ 'x-ratelimit-limit': '3', 'x-ratelimit-remaining': '2' });
  });

  it('cost: a request costing 2 spends two of the limit', async () => {
    const url = await start({ throttlers: [{ limit: 4, ttl: seconds(60) }], cost: 2 });
    const first = await get(`${url}/read`);
    expect(first.headers['x-ratelimit-remaining']).toBe('2');
    expect((await get(`${url}/read`)).status).toBe(200);
    expect((await get(`${url}/read`)).status).toBe(429);
  });

  it('draft-8 headers list every throttler of the route; X-RateLimit-*-<name> stay', async () => {
    const url = await start({
      standardHeaders: 'draft-8',
      throttlers: [
        { name: 'short', limit: 5, ttl: seconds(1) },
        { name: 'long', limit: 100, ttl: seconds(60) },
      ],
    });
    const response = await get(`${url}/read`);
    expect(response.headers['ratelimit-policy']).toMatch(/^"short"; q=5; w=1; pk=:[A-Za-z0-9+/=]+:, "long"; q=100; w=60; pk=:[A-Za-z0-9+/=]+:$/);
    expect(response.headers.ratelimit).toBe('"short"; r=4; t=1, "long"; r=99; t=60');
    expect(response.headers['x-ratelimit-remaining-short']).toBe('4');
    expect(response.headers['x-ratelimit-remaining-long']).toBe('99');
  });

  it('a throttler with its own tracker is decided in its own store call; when it refuses, the other call is given back', async () => {
    const url = await start({
      policy: 'all-or-nothing',
      throttlers: [
        { name: 'ip', limit: 5, ttl: seconds(60) },
        { name: 'user', limit: 1, ttl: seconds(60), getTracker: (req) => String(req.headers['x-user']) },
      ],
    });
    const as = (user: string) => fetch(`${url}/read`, { headers: { 'x-user': user } }).then((r) => ({ status: r.status, headers: Object.fromEntries(r.headers) }));
    expect((await as('ann')).headers['x-ratelimit-remaining-ip']).toBe('4');
    const refused = await as('ann');
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after-user']).toMatch(/^\d+$/);
    expect(refused.headers['x-ratelimit-remaining-ip']).toBe('4'); // charged, then given back
    const other = await as('bob');
    expect(other.status).toBe(200);
    expect(other.headers['x-ratelimit-remaining-ip']).toBe('3');
  });

  it.each([
    ['draft-6', { 'ratelimit-limit': '5', 'ratelimit-remaining': '4', 'ratelimit-reset': '1' }],
    ['draft-7', { ratelimit: 'limit=5, remaining=4, reset=1' }],
  ] as const)('%s headers report the binding throttler', async (standardHeaders, expected) => {
    const url = await start({
      standardHeaders,
      throttlers: [
        { name: 'short', limit: 5, ttl: seconds(1) },
        { name: 'long', limit: 100, ttl: seconds(60) },
      ],
    });
    const response = await get(`${url}/read`);
    expect(response.headers).toMatchObject(expected);
    expect(response.headers['ratelimit-policy']).toBe('5;w=1, 100;w=60');
  });

  it('blockDurationMs: a refused tracker stays refused after the window ends', async () => {
    // Only Date is faked, before the app reads it: the three requests share one instant (on the
    // real clock, a busy machine can spread them past the 200 ms window), and the window ends when
    // the test moves the clock.
    const T0 = 1_700_000_000_000;
    jest.useFakeTimers({ now: T0, doNotFake: ['nextTick', 'setImmediate', 'clearImmediate', 'queueMicrotask', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance', 'hrtime'] });
    try {
      const url = await start({ throttlers: [{ limit: 100, ttl: seconds(60) }], policy: 'all-or-nothing' });
      expect((await get(`${url}/blocking`)).status).toBe(200);
      expect((await get(`${url}/blocking`)).status).toBe(200);
      const refused = await get(`${url}/blocking`);
      expect(refused.status).toBe(429);
      expect(refused.headers['retry-after']).toBe('60');
      jest.setSystemTime(T0 + 250); // the 200 ms window has ended; the block has not
      expect((await get(`${url}/blocking`)).status).toBe(429);
    } finally {
      jest.useRealTimers();
    }
  });

  it("onStoreError 'allow' lets requests through when the store fails; 'deny' refuses them; 'throw' answers 500", async () => {
    let url = await start({ throttlers: [{ limit: 1, ttl: seconds(60) }], store: brokenStore('fails'), onStoreError: 'allow' });
    const errors = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      expect((await get(`${url}/read`)).status).toBe(200);
      expect((await get(`${url}/read`)).status).toBe(200);
      expect(errors).toHaveBeenCalled(); // reported, never swallowed
      await app!.close();
      url = await start({ throttlers: [{ limit: 1, ttl: seconds(60) }], store: brokenStore('fails'), onStoreError: 'deny' });
      expect((await get(`${url}/read`)).status).toBe(429);
      await app!.close();
      url = await start({ throttlers: [{ limit: 1, ttl: seconds(60) }], store: brokenStore('fails') });
      expect((await get(`${url}/read`)).status).toBe(500);
    } finally {
      errors.mockRestore();
    }
  });

  it('storeTimeoutMs: a store that never answers does not hang the request', async () => {
    const errors = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const url = await start({ throttlers: [{ limit: 1, ttl: seconds(60) }], store: brokenStore('hangs'), storeTimeoutMs: 50, onStoreError: 'allow' });
      const started = Date.now();
      expect((await get(`${url}/read`)).status).toBe(200);
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      errors.mockRestore();
    }
  });
});

describe('ratekit options are checked when the app starts', () => {
  const init = async (options: ThrottlerModuleOptions) => {
    const moduleRef = await Test.createTestingModule({ imports: [appModule(options)] }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    try {
      await app.init();
    } finally {
      await app.close().catch(() => undefined);
    }
  };

  it.each([
    [{ algorithm: 'leaky' as never, throttlers: [{ limit: 1, ttl: 1_000 }] }, /algorithm/],
    [{ standardHeaders: 'draft-99' as never, throttlers: [{ limit: 1, ttl: 1_000 }] }, /standardHeaders/],
    [{ cost: -1, throttlers: [{ limit: 1, ttl: 1_000 }] }, /cost/],
    [{ policy: 'some' as never, throttlers: [{ limit: 1, ttl: 1_000 }] }, /policy/],
    [{ policy: 'all-or-nothing' as const, throttlers: [{ limit: 0, ttl: 1_000 }] }, /throttlers\[0\]\.limit/],
    [{ ipv6SubnetPrefix: 200, throttlers: [{ limit: 1, ttl: 1_000 }] }, /ipv6SubnetPrefix/],
    // Upstream fails at start-up too, with a TypeError.
    [{ throttlers: undefined as never }, /throttlers/],
  ])('%# rejects a bad option with a RateKitOptionError naming it', async (options, name) => {
    const failure = init(options);
    await expect(failure).rejects.toThrow(RateKitOptionError);
    await expect(init(options)).rejects.toThrow(name);
  });
});
