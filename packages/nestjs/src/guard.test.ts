import { Controller, Get, type INestApplication, Injectable, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { SkipThrottle, Throttle } from './decorators.js';
import { ThrottlerGuard } from './guard.js';
import { ThrottlerModule } from './module.js';
import type { ThrottlerModuleOptions } from './options.js';
import { get, PLATFORMS, startApp } from './test-app.js';
import { seconds } from './utilities.js';

@Controller()
class ItemsController {
  @Get('items')
  list() {
    return { items: [] };
  }

  @Throttle({ default: { limit: 1, ttl: seconds(60) } })
  @Get('strict')
  strict() {
    return { ok: true };
  }

  @SkipThrottle()
  @Get('health')
  health() {
    return { ok: true };
  }
}

@Module({
  imports: [
    ThrottlerModule.forRoot([
      { limit: 2, ttl: seconds(60) },
      { name: 'long', limit: 5, ttl: seconds(600) },
    ]),
  ],
  controllers: [ItemsController],
  providers: [{ provide: APP_GUARD, useClass: ThrottlerGuard }],
})
class DropInModule {}

describe.each(PLATFORMS)('ThrottlerGuard as @nestjs/throttler on %s', (_name, platform) => {
  let app: INestApplication;
  let url: string;
  beforeEach(async () => {
    ({ app, url } = await startApp(DropInModule, platform));
  });
  afterEach(() => app.close());

  it('answers with X-RateLimit-* headers, -<name> for a named throttler, then 429 with Retry-After and upstream body', async () => {
    const first = await get(`${url}/items`);
    expect(first.status).toBe(200);
    expect(first.headers).toMatchObject({
      'x-ratelimit-limit': '2',
      'x-ratelimit-remaining': '1',
      'x-ratelimit-reset': '60',
      'x-ratelimit-limit-long': '5',
      'x-ratelimit-remaining-long': '4',
      'x-ratelimit-reset-long': '600',
    });
    expect((await get(`${url}/items`)).headers['x-ratelimit-remaining']).toBe('0');
    const refused = await get(`${url}/items`);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ statusCode: 429, message: 'ThrottlerException: Too Many Requests' });
    // blockDuration defaults to ttl: the block's seconds.
    expect(refused.headers['retry-after']).toBe('60');
    expect(refused.headers['retry-after-long']).toBeUndefined();
  });

  it('uses a route override and skips a skipped route', async () => {
    expect((await get(`${url}/strict`)).status).toBe(200);
    expect((await get(`${url}/strict`)).status).toBe(429);
    for (let i = 0; i < 5; i++) {
      const response = await get(`${url}/health`);
      expect(response.status).toBe(200);
      expect(response.headers['x-ratelimit-limit']).toBeUndefined();
      // @SkipThrottle() skips `default` only: `long` still counts.
      expect(response.headers['x-ratelimit-remaining-long']).toBe(String(4 - i));
    }
  });
});

/** Two throttlers and routes sharing one key (the tracker alone), to see what a refusal charges. */
@Controller()
class SharedController {
  @Get('both')
  both() {
    return { ok: true };
  }

  @SkipThrottle({ burst: true })
  @Get('hourly')
  hourly() {
    return { ok: true };
  }
}

function sharedModule(policy: 'each' | 'all-or-nothing') {
  @Module({
    imports: [
      ThrottlerModule.forRoot({
        policy,
        generateKey: (_context, tracker) => tracker,
        throttlers: [
          { name: 'burst', limit: 2, ttl: seconds(60) },
          { name: 'hour', limit: 3, ttl: seconds(3_600) },
        ],
      }),
    ],
    controllers: [SharedController],
    providers: [{ provide: APP_GUARD, useClass: ThrottlerGuard }],
  })
  class SharedModule {}
  return SharedModule;
}

describe.each(PLATFORMS)('named throttlers of a route on %s', (_name, platform) => {
  let app: INestApplication | undefined;
  afterEach(() => app?.close());

  it("policy 'each' (upstream): a request refused by `hour` has charged `burst` already", async () => {
    let url: string;
    ({ app, url } = await startApp(sharedModule('each'), platform));
    for (let i = 0; i < 3; i++) expect((await get(`${url}/hourly`)).status).toBe(200);
    const first = await get(`${url}/both`);
    expect(first.status).toBe(429);
    expect(first.headers['x-ratelimit-remaining-burst']).toBe('1');
    expect(first.headers['retry-after-hour']).toMatch(/^\d+$/);
    await get(`${url}/both`);
    // `burst` was charged by both refusals: now it refuses by itself.
    const third = await get(`${url}/both`);
    expect(third.status).toBe(429);
    expect(third.headers['retry-after-burst']).toMatch(/^\d+$/);
  });

  it("policy 'all-or-nothing' (ratekit): one store call, and a refusal charges no throttler", async () => {
    let url: string;
    ({ app, url } = await startApp(sharedModule('all-or-nothing'), platform));
    for (let i = 0; i < 3; i++) expect((await get(`${url}/hourly`)).status).toBe(200);
    for (let i = 0; i < 3; i++) {
      const refused = await get(`${url}/both`);
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({ statusCode: 429, message: 'ThrottlerException: Too Many Requests' });
      expect(refused.headers['x-ratelimit-remaining-burst']).toBe('2');
      expect(refused.headers['retry-after-hour']).toMatch(/^\d+$/);
      expect(refused.headers['retry-after-burst']).toBeUndefined();
    }
  });
});

describe('ipv6SubnetPrefix: the default tracker of IPv6 clients', () => {
  class TrackerProbe extends ThrottlerGuard {
    tracker(ip: string) {
      return this.getTracker({ ip });
    }
  }
  Injectable()(TrackerProbe);

  const trackerWith = async (options: ThrottlerModuleOptions, ip: string) => {
    const moduleRef = await Test.createTestingModule({ imports: [ThrottlerModule.forRoot(options)], providers: [TrackerProbe] }).compile();
    await moduleRef.init();
    const tracker = await moduleRef.get(TrackerProbe).tracker(ip);
    await moduleRef.close();
    return tracker;
  };

  it.each([
    ["@nestjs/throttler's mode: whole, as upstream", [{ limit: 1, ttl: 1_000 }], '2001:db8:1234:5678::1'],
    ["@nestjs/throttler's mode, ipv6SubnetPrefix: 64", { ipv6SubnetPrefix: 64, throttlers: [{ limit: 1, ttl: 1_000 }] }, '2001:db8:1234:5678::/64'],
    ['the ratekit mode: grouped by /56', { policy: 'all-or-nothing', throttlers: [{ limit: 1, ttl: 1_000 }] }, '2001:db8:1234:5600::/56'],
    ['the ratekit mode, ipv6SubnetPrefix: false', { policy: 'all-or-nothing', ipv6SubnetPrefix: false, throttlers: [{ limit: 1, ttl: 1_000 }] }, '2001:db8:1234:5678::1'],
  ] as Array<[string, ThrottlerModuleOptions, string]>)('%s', async (_name, options, expected) => {
    expect(await trackerWith(options, '2001:db8:1234:5678::1')).toBe(expected);
    expect(await trackerWith(options, '203.0.113.7')).toBe('203.0.113.7');
  });
});
