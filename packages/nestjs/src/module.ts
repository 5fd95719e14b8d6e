import { type DynamicModule, Global, Module, type Provider } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { THROTTLER_OPTIONS } from './constants.js';
import type { ThrottlerAsyncOptions, ThrottlerModuleOptions, ThrottlerOptionsFactory } from './options.js';
import { createThrottlerProviders, ThrottlerStorageProvider } from './providers.js';
import { ThrottlerRouteCheck } from './route-check.js';

/**
 * The global module providing the throttler's options and storage to `ThrottlerGuard`, as
 * @nestjs/throttler's `ThrottlerModule`. In the ratekit mode it also checks every route's
 * `@Throttle` when the app starts (see `ThrottlerRouteCheck`).
 *
 * @throws {RateKitOptionError} from the app's init (`app.init()`, `app.listen()`) on a bad ratekit option.
 *
 * @example
 * ```ts
 * @Module({
 *   imports: [ThrottlerModule.forRoot([{ ttl: seconds(60), limit: 10 }])],
 *   providers: [{ provide: APP_GUARD, useClass: ThrottlerGuard }],
 * })
 * export class AppModule {}
 * ```
 */
export class ThrottlerModule {
  /** Registers the module with its options. */
  static forRoot(options: ThrottlerModuleOptions = []): DynamicModule {
    const providers = [...createThrottlerProviders(options), ThrottlerStorageProvider];
    return { module: ThrottlerModule, imports: [DiscoveryModule], providers: [...providers, ThrottlerRouteCheck], exports: providers };
  }

  /** Registers the module with options made by a factory, a class or an existing provider. */
  static forRootAsync(options: ThrottlerAsyncOptions): DynamicModule {
    const providers = [...ThrottlerModule.createAsyncProviders(options), ThrottlerStorageProvider];
    return { module: ThrottlerModule, imports: [...(options.imports || []), DiscoveryModule], providers: [...providers, ThrottlerRouteCheck], exports: providers };
  }

  private static createAsyncProviders(options: ThrottlerAsyncOptions): Provider[] {
    const provider = ThrottlerModule.createAsyncOptionsProvider(options);
    if (options.useExisting || options.useFactory) return [provider];
    return [provider, { provide: options.useClass!, useClass: options.useClass! }];
  }

  private static createAsyncOptionsProvider(options: ThrottlerAsyncOptions): Provider {
    if (options.useFactory) return { provide: THROTTLER_OPTIONS, useFactory: options.useFactory, inject: options.inject || [] };
    return {
      provide: THROTTLER_OPTIONS,
      useFactory: (factory: ThrottlerOptionsFactory) => factory.createThrottlerOptions(),
      inject: [(options.useExisting || options.useClass)!],
    };
  }
}
Global()(ThrottlerModule);
Module({})(ThrottlerModule);
