import { Controller, Get, type INestApplication, Module, type Type } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import * as upstream from '@nestjs/throttler';
import { redisStore } from '@ratekit/redis';
import { describeWithService, redisService } from '@ratekit/test-utils';
import { Redis } from 'ioredis';
import { ThrottlerGuard } from './guard.js';
import { ThrottlerModule } from './module.js';
import type { ThrottlerModuleOptions } from './options.js';
import { ThrottlerStorageService } from './storage-service.js';
import { get, PLATFORMS, startApp } from './test-app.js';

@Controller()
class ItemsController {
  @Get('items')
  list() {
    return { items: [] };
  }
}

/** The app, with our module and guard, or @nestjs/throttler's own (keeping it, with our storage). */
function appModule(options: ThrottlerModuleOptions, throttler: 'ours' | 'upstream' = 'ours'): Type<unknown> {
  const { ThrottlerModule: TheModule, ThrottlerGuard: TheGuard } = throttler === 'ours' ? { ThrottlerModule, ThrottlerGuard } : upstream;
  @Module({
    imports: [TheModule.forRoot(options)],
    controllers: [ItemsController],
    providers: [{ provide: APP_GUARD, useClass: TheGuard }],
  })
  class AppModule {}
  return AppModule;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeWithService(redisService, '@ratekit/nestjs on a real Redis', (server) => {
  const clients: Redis[] = [];
  const connect = async () => {
    const client = new Redis(server().url);
    clients.push(client);
    await new Promise<void>((resolve, reject) => client.once('ready', resolve).once('error', reject));
    return client;
  };
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.quit()));
  });
  let prefixes = 0;
  const freshPrefix = () => `nestjs-test-${process.pid}-${++prefixes}:`;

  it('ThrottlerStorageService on redisStore: upstream semantics on the server clock (block, then the count starts again)', async () => {
    const storage = new ThrottlerStorageService({ store: redisStore({ client: await connect() }), prefix: freshPrefix() });
    // Redis's clock, which no fake reaches: the 4th call must come within the 1 s block of the 3rd
    // (one round trip, with 1 s of margin), and the 5th after it (sleeping longer only helps) but
    // within the 5 s window (3.9 s of margin).
    expect(await storage.increment('k', 5_000, 2, 1_000, 'default')).toMatchObject({ totalHits: 1, isBlocked: false, timeToExpire: 5 });
    expect(await storage.increment('k', 5_000, 2, 1_000, 'default')).toMatchObject({ totalHits: 2, isBlocked: false });
    expect(await storage.increment('k', 5_000, 2, 1_000, 'default')).toMatchObject({ totalHits: 3, isBlocked: true, timeToBlockExpire: 1 });
    expect(await storage.increment('k', 5_000, 2, 1_000, 'default')).toMatchObject({ isBlocked: true });
    await sleep(1_100); // the block has ended; the 5 s window has not
    expect(await storage.increment('k', 5_000, 2, 1_000, 'default')).toMatchObject({ totalHits: 1, isBlocked: false });
  });

  it('ThrottlerStorageService on redisStore, a block as long as ttl (one limit with a block): the same semantics', async () => {
    const storage = new ThrottlerStorageService({ store: redisStore({ client: await connect() }), prefix: freshPrefix() });
    // Redis's clock, which no fake reaches: the first four calls must fall inside the 2 s window
    // (four round trips, with about 2 s of margin); the 5th comes after it (sleeping longer only helps).
    expect(await storage.increment('k', 2_000, 2, 2_000, 'default')).toMatchObject({ totalHits: 1, isBlocked: false, timeToExpire: 2 });
    expect(await storage.increment('k', 2_000, 2, 2_000, 'default')).toMatchObject({ totalHits: 2, isBlocked: false });
    expect(await storage.increment('k', 2_000, 2, 2_000, 'default')).toMatchObject({ totalHits: 3, isBlocked: true, timeToBlockExpire: 2 });
    expect(await storage.increment('k', 2_000, 2, 2_000, 'default')).toMatchObject({ isBlocked: true });
    await sleep(2_100); // the block has ended, and the window with it
    expect(await storage.increment('k', 2_000, 2, 2_000, 'default')).toMatchObject({ totalHits: 1, isBlocked: false });
  });

  describe.each([
    ["@nestjs/throttler's mode, storage: ThrottlerStorageService on Redis", 'each', 'ours'],
    ['the ratekit mode, store: redisStore (all-or-nothing)', 'all-or-nothing', 'ours'],
    ['@nestjs/throttler 6.5.0 itself, storage: ThrottlerStorageService on Redis', 'each', 'upstream'],
  ] as const)('two instances of an app sharing one Redis hold a limit exactly: %s', (_title, mode, throttler) => {
    const apps: INestApplication[] = [];
    afterEach(async () => {
      await Promise.all(apps.splice(0).map((app) => app.close()));
    });

    it('admits exactly `limit` of 40 concurrent requests spread over an Express and a Fastify instance', async () => {
      const prefix = freshPrefix();
      const options = async (): Promise<ThrottlerModuleOptions> => {
        const store = redisStore({ client: await connect(), prefix });
        const throttlers = [{ limit: 15, ttl: 60_000 }];
        return mode === 'each' ? { throttlers, storage: new ThrottlerStorageService({ store }) } : { throttlers, store };
      };
      // An old and a new instance during a rolling deploy: each its own process state and Redis connection.
      const urls: string[] = [];
      for (const [, platform] of PLATFORMS) {
        const { app, url } = await startApp(appModule(await options(), throttler), platform);
        apps.push(app);
        urls.push(url);
      }
      const responses = await Promise.all(Array.from({ length: 40 }, (_, i) => get(`${urls[i % 2]}/items`)));
      const statuses = responses.map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(15);
      expect(statuses.filter((s) => s === 429)).toHaveLength(25);
      // Both instances answered some of the admitted requests, from one shared count.
      const admittedBy = [0, 1].map((n) => responses.filter((r, i) => i % 2 === n && r.status === 200).length);
      expect(admittedBy.every((count) => count > 0)).toBe(true);
      const remaining = responses
        .filter((r) => r.status === 200)
        .map((r) => Number(r.headers['x-ratelimit-remaining']))
        .sort((a, b) => a - b);
      expect(remaining).toEqual(Array.from({ length: 15 }, (_, i) => i));
    });
  });
});
