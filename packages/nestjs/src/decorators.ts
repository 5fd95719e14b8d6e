import { Inject } from '@nestjs/common';
import { THROTTLER_BLOCK_DURATION, THROTTLER_KEY_GENERATOR, THROTTLER_LIMIT, THROTTLER_RATEKIT, THROTTLER_SKIP, THROTTLER_TRACKER, THROTTLER_TTL } from './constants.js';
import type { RateKitThrottlerOptions, Resolvable, ThrottlerGenerateKeyFunction, ThrottlerGetTrackerFunction } from './options.js';
import { getOptionsToken, getStorageToken } from './providers.js';

/** One throttler's route or controller options in `@Throttle()`. */
export interface ThrottlerMethodOrControllerOptions extends RateKitThrottlerOptions {
  limit?: Resolvable<number>;
  /** The window, in ms. */
  ttl?: Resolvable<number>;
  /** @nestjs/throttler's block, in ms. */
  blockDuration?: Resolvable<number>;
  getTracker?: ThrottlerGetTrackerFunction;
  generateKey?: ThrottlerGenerateKeyFunction;
}

function setThrottlerMetadata(target: object, options: Record<string, ThrottlerMethodOrControllerOptions>): void {
  for (const name in options) {
    const { ttl, limit, blockDuration, getTracker, generateKey, algorithm, burst, blockDurationMs } = options[name]!;
    Reflect.defineMetadata(THROTTLER_TTL + name, ttl, target);
    Reflect.defineMetadata(THROTTLER_LIMIT + name, limit, target);
    Reflect.defineMetadata(THROTTLER_BLOCK_DURATION + name, blockDuration, target);
    Reflect.defineMetadata(THROTTLER_TRACKER + name, getTracker, target);
    Reflect.defineMetadata(THROTTLER_KEY_GENERATOR + name, generateKey, target);
    if (algorithm !== undefined || burst !== undefined || blockDurationMs !== undefined) {
      Reflect.defineMetadata(THROTTLER_RATEKIT + name, { algorithm, burst, blockDurationMs }, target);
    }
  }
}

/**
 * Sets a route's or a controller's limits, per throttler name (a method's override its class's).
 * `algorithm`, `burst` and `blockDurationMs` apply in the ratekit mode, which the module's options
 * choose; in @nestjs/throttler's mode they are ignored, as its storage contract has no place for them.
 *
 * @example
 * ```ts
 * @Throttle({ default: { limit: 3, ttl: seconds(60) } })
 * @Throttle({ default: { limit: () => 20, ttl: () => 60_000, algorithm: 'sliding-window' } })
 * ```
 */
export const Throttle = (options: Record<string, ThrottlerMethodOrControllerOptions>): MethodDecorator & ClassDecorator => {
  // Returns nothing: the method or class stays as it is, with the metadata on it.
  return (target: unknown, _propertyKey?: string | symbol, descriptor?: PropertyDescriptor): void => {
    setThrottlerMetadata(reflectionTarget(target, descriptor), options);
  };
};

/**
 * Skips throttlers on a route or a controller: `@SkipThrottle()` skips `default`,
 * `@SkipThrottle({ short: true })` the throttler named `short`, `@SkipThrottle({ default: false })`
 * throttles a route of a skipped controller again.
 */
export const SkipThrottle = (skip: Record<string, boolean> = { default: true }): MethodDecorator & ClassDecorator => {
  return (target: unknown, _propertyKey?: string | symbol, descriptor?: PropertyDescriptor): void => {
    const on = reflectionTarget(target, descriptor);
    for (const key in skip) Reflect.defineMetadata(THROTTLER_SKIP + key, skip[key], on);
  };
};

/** Where a decorator's metadata goes, as upstream puts it: on the method (a method decorator) or on the class. */
function reflectionTarget(target: unknown, descriptor: PropertyDescriptor | undefined): object {
  return (descriptor === undefined ? target : descriptor.value) as object;
}

/** Injects the module's options (`@InjectThrottlerOptions() options: ThrottlerModuleOptions`). */
export const InjectThrottlerOptions = (): PropertyDecorator & ParameterDecorator => Inject(getOptionsToken());

/** Injects the storage (`@InjectThrottlerStorage() storage: ThrottlerStorage`). */
export const InjectThrottlerStorage = (): PropertyDecorator & ParameterDecorator => Inject(getStorageToken());
