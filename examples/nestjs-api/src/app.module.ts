import { type DynamicModule, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import type { RateLimitStore } from '@ratekit/core';
import { ThrottlerGuard, ThrottlerModule, throttlerMessage } from '@ratekit/nestjs';
import { HealthController, ItemsController } from './items.controller.js';
import { READ_POLICY, WRITE_REFUSED_MESSAGE } from './policies.js';

export interface AppOptions {
  /** The ratekit store of both policies (default: a new bounded in-memory store). A `redisStore()` shares the counts across instances. */
  store?: RateLimitStore;
}

/**
 * The app: @nestjs/throttler's setup (`ThrottlerModule.forRoot` with the read policy as its
 * throttler, `ThrottlerGuard` as the global `APP_GUARD`, `@Throttle` on the write route), with
 * ratekit's options where the policies need them: `algorithm` and `burst` on the throttler and in
 * `@Throttle`, and the draft-8 `RateLimit` / `RateLimit-Policy` fields besides the legacy
 * `X-RateLimit-*`.
 */
@Module({})
export class AppModule {
  static register({ store }: AppOptions = {}): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ThrottlerModule.forRoot({
          throttlers: [READ_POLICY],
          standardHeaders: 'draft-8',
          errorMessage: (context) => (context.getHandler() === ItemsController.prototype.create ? WRITE_REFUSED_MESSAGE : throttlerMessage),
          ...(store === undefined ? {} : { store }),
        }),
      ],
      controllers: [ItemsController, HealthController],
      providers: [{ provide: APP_GUARD, useClass: ThrottlerGuard }],
    };
  }
}
