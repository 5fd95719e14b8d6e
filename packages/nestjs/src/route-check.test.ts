import { Controller, Get, Injectable, type Type } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { RateKitOptionError } from '@ratekit/core';
import { SkipThrottle, Throttle } from './decorators.js';
import { ThrottlerGuard } from './guard.js';
import { ThrottlerModule } from './module.js';
import type { ThrottlerModuleOptions } from './options.js';

/** A module throttler on a token bucket of 20, as the example's read policy. */
const BUCKET_MODULE: ThrottlerModuleOptions = { throttlers: [{ ttl: 1_000, limit: 10, algorithm: 'token-bucket', burst: 20 }] };

/** Starts (app.init) an app of these controllers and providers; resolves to the error it fails with, or undefined. */
async function startupError(options: ThrottlerModuleOptions, controllers: Type<unknown>[], providers: Type<unknown>[] = []): Promise<unknown> {
  const moduleRef = await Test.createTestingModule({
    imports: [ThrottlerModule.forRoot(options)],
    controllers,
    providers: [...providers, { provide: APP_GUARD, useClass: ThrottlerGuard }],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  try {
    await app.init();
    return undefined;
  } catch (error) {
    return error;
  } finally {
    await app.close().catch(() => undefined);
  }
}

describe('every route’s @Throttle is checked when the app starts (ratekit mode)', () => {
  it('a route that changes the module throttler’s algorithm starts: it does not inherit the burst', async () => {
    @Controller()
    class WritesController {
      @Throttle({ default: { ttl: 10_000, limit: 5, algorithm: 'sliding-window' } })
      @Get('write')
      write() {
        return {};
      }
    }
    expect(await startupError(BUCKET_MODULE, [WritesController])).toBeUndefined();
  });

  it('a burst on a route whose algorithm has none fails, naming the route, the throttler and the option', async () => {
    @Controller()
    class ItemsController {
      @Throttle({ default: { burst: 5 } })
      @Get('items')
      list() {
        return {};
      }
    }
    const error = await startupError({ throttlers: [{ ttl: 1_000, limit: 10, algorithm: 'sliding-window' }] }, [ItemsController]);
    expect(error).toBeInstanceOf(RateKitOptionError);
    expect(error).toMatchObject({ code: 'ERR_RATEKIT_INVALID_OPTION', option: '@Throttle(ItemsController.list).default.burst', received: 5 });
  });

  it('a controller’s @Throttle is checked for each of its routes', async () => {
    @Throttle({ default: { algorithm: 'fixed-window', burst: 3 } })
    @Controller()
    class ReportsController {
      @Get('reports')
      list() {
        return {};
      }
    }
    expect(await startupError(BUCKET_MODULE, [ReportsController])).toMatchObject({ option: '@Throttle(ReportsController.list).default.burst' });
  });

  it('a named throttler’s fixed limit on a route is checked', async () => {
    @Controller()
    class SearchController {
      @Throttle({ long: { limit: -1 } })
      @Get('search')
      search() {
        return {};
      }
    }
    const options: ThrottlerModuleOptions = {
      policy: 'all-or-nothing',
      throttlers: [
        { ttl: 1_000, limit: 10 },
        { name: 'long', ttl: 60_000, limit: 100 },
      ],
    };
    expect(await startupError(options, [SearchController])).toMatchObject({ option: '@Throttle(SearchController.search).long.limit', received: -1 });
  });

  it('a bad blockDurationMs on a route is checked', async () => {
    @Controller()
    class LoginController {
      @Throttle({ default: { blockDurationMs: 2 ** 40 } })
      @Get('login')
      login() {
        return {};
      }
    }
    expect(await startupError(BUCKET_MODULE, [LoginController])).toMatchObject({ option: '@Throttle(LoginController.login).default.blockDurationMs' });
  });

  it('the methods of providers (GraphQL resolvers, gateways) are checked too', async () => {
    @Injectable()
    class ItemsResolver {
      @Throttle({ default: { algorithm: 'sliding-window', burst: 2 } })
      items() {
        return [];
      }
    }
    expect(await startupError(BUCKET_MODULE, [], [ItemsResolver])).toMatchObject({ option: '@Throttle(ItemsResolver.items).default.burst' });
  });

  it('a limit given as a function is left to the request; the route’s other options are still checked', async () => {
    @Controller()
    class PlansController {
      @Throttle({ default: { limit: () => 5, algorithm: 'fixed-window' } })
      @Get('ok')
      ok() {
        return {};
      }

      @Throttle({ default: { limit: () => 5, algorithm: 'sliding-window', burst: 9 } })
      @Get('bad')
      bad() {
        return {};
      }
    }
    expect(await startupError(BUCKET_MODULE, [PlansController])).toMatchObject({ option: '@Throttle(PlansController.bad).default.burst' });
  });

  it('a route that skips the throttler is not checked for it', async () => {
    @Controller()
    class HealthController {
      @SkipThrottle()
      @Throttle({ default: { algorithm: 'sliding-window', burst: 2 } })
      @Get('health')
      health() {
        return {};
      }
    }
    expect(await startupError(BUCKET_MODULE, [HealthController])).toBeUndefined();
  });

  it('in @nestjs/throttler’s mode ratekit’s options are ignored, so nothing is checked (as upstream)', async () => {
    @Controller()
    class LegacyController {
      @Throttle({ default: { limit: 5, burst: 2 } })
      @Get('legacy')
      legacy() {
        return {};
      }
    }
    expect(await startupError([{ ttl: 1_000, limit: 10 }], [LegacyController])).toBeUndefined();
  });
});
