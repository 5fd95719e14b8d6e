import { Controller, Get, type INestApplication, Injectable, Module, type Type } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { ThrottlerGuard } from './guard.js';
import { ThrottlerModule } from './module.js';
import type { ThrottlerModuleOptions, ThrottlerOptionsFactory } from './options.js';
import { getOptionsToken, getStorageToken } from './providers.js';
import { ThrottlerStorageService } from './storage-service.js';
import { get, PLATFORMS, startApp } from './test-app.js';

@Controller()
class PingController {
  @Get('ping')
  ping() {
    return { pong: true };
  }
}

@Injectable()
class LimitsConfig {
  readonly limit = 1;
}

@Module({ providers: [LimitsConfig], exports: [LimitsConfig] })
class ConfigModule {}

@Injectable()
class ThrottlerConfig implements ThrottlerOptionsFactory {
  createThrottlerOptions(): ThrottlerModuleOptions {
    return [{ limit: 1, ttl: 60_000 }];
  }
}

function appWith(throttlerModule: ReturnType<typeof ThrottlerModule.forRootAsync>): Type<unknown> {
  @Module({ imports: [throttlerModule], controllers: [PingController], providers: [{ provide: APP_GUARD, useClass: ThrottlerGuard }] })
  class AppModule {}
  return AppModule;
}

describe('ThrottlerModule.forRootAsync', () => {
  let app: INestApplication | undefined;
  afterEach(() => app?.close());

  it.each([
    ['useFactory with inject', ThrottlerModule.forRootAsync({ imports: [ConfigModule], inject: [LimitsConfig], useFactory: (config: LimitsConfig) => [{ limit: config.limit, ttl: 60_000 }] })],
    ['useClass', ThrottlerModule.forRootAsync({ useClass: ThrottlerConfig })],
  ])('%s: the options it makes apply', async (_name, throttlerModule) => {
    let url: string;
    ({ app, url } = await startApp(appWith(throttlerModule), PLATFORMS[0]![1]));
    expect((await get(`${url}/ping`)).headers['x-ratelimit-limit']).toBe('1');
    expect((await get(`${url}/ping`)).status).toBe(429);
  });
});

describe('ThrottlerModule.forRoot providers', () => {
  it('provides the options under getOptionsToken() and a bounded ThrottlerStorageService under getStorageToken()', async () => {
    const options = [{ limit: 5, ttl: 1_000 }];
    const moduleRef = await Test.createTestingModule({ imports: [ThrottlerModule.forRoot(options)] }).compile();
    expect(moduleRef.get(getOptionsToken())).toBe(options);
    expect(moduleRef.get(getStorageToken())).toBeInstanceOf(ThrottlerStorageService);
    await moduleRef.close();
  });

  it('uses the storage given in the options', async () => {
    const storage = { increment: jest.fn() };
    const moduleRef = await Test.createTestingModule({ imports: [ThrottlerModule.forRoot({ throttlers: [], storage })] }).compile();
    expect(moduleRef.get(getStorageToken())).toBe(storage);
    await moduleRef.close();
  });
});
