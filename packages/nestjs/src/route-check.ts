import { Inject, Injectable, type OnModuleInit, type Type } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { THROTTLER_BLOCK_DURATION, THROTTLER_LIMIT, THROTTLER_RATEKIT, THROTTLER_SKIP, THROTTLER_TTL } from './constants.js';
import type { RateKitThrottlerOptions, Resolvable, ThrottlerModuleOptions, ThrottlerOptions } from './options.js';
import { checkThrottler, checkThrottlers, isRateKitMode } from './policy.js';
import { getOptionsToken } from './providers.js';
import { mergeRateKitOptions } from './route-options.js';

/** A route handler (a method of a controller, a resolver or a gateway). */
type Handler = (...args: never[]) => unknown;

/** The metadata keys `@Throttle` sets, per throttler name. */
const THROTTLE_KEYS = [THROTTLER_LIMIT, THROTTLER_TTL, THROTTLER_BLOCK_DURATION, THROTTLER_RATEKIT];

/**
 * Checks, when the app starts, every `@Throttle` of the app's controllers and providers (GraphQL
 * resolvers, gateways) against the module's throttlers, in the ratekit mode: each route's options
 * merged as the guard merges them (see `mergeRateKitOptions`) must make a valid ratekit limit, or
 * the app fails to start with the `RateKitOptionError` naming the route, the throttler and the
 * option (`@Throttle(ItemsController.create).default.burst`), rather than answer 500 to every
 * request of that route. A `limit` or `ttl` given as a function is checked when a request resolves
 * it. In @nestjs/throttler's mode it does nothing: ratekit's options are ignored there.
 *
 * @throws {RateKitOptionError} from `onModuleInit`, on the first bad route.
 */
export class ThrottlerRouteCheck implements OnModuleInit {
  constructor(
    private readonly options: ThrottlerModuleOptions,
    private readonly discovery: DiscoveryService,
    private readonly reflector: Reflector,
  ) {}

  onModuleInit(): void {
    if (Array.isArray(this.options) || !isRateKitMode(this.options)) return;
    const options = this.options;
    // The module's throttlers first, so that an error of theirs names them, not a route.
    checkThrottlers(options);
    const throttlers = options.throttlers.map((throttler) => ({ ...throttler, name: throttler.name ?? 'default' }));
    const scanner = new MetadataScanner();
    // Classes, not wrappers: a class provided in several modules is checked once.
    const classes = new Set<Type<unknown>>();
    for (const wrapper of [...this.discovery.getControllers(), ...this.discovery.getProviders()]) {
      if (!wrapper.isNotMetatype && typeof wrapper.metatype === 'function') classes.add(wrapper.metatype as Type<unknown>);
    }
    for (const classRef of classes) {
      const prototype = classRef.prototype as Record<string, unknown> | undefined;
      if (prototype === undefined) continue;
      for (const method of scanner.getAllMethodNames(prototype)) {
        const handler = prototype[method];
        if (typeof handler !== 'function') continue;
        for (const throttler of throttlers) this.checkRoute(options.algorithm, throttler, classRef, handler as Handler, method);
      }
    }
  }

  /** One throttler on one route, when `@Throttle` sets something for it there. */
  private checkRoute(moduleAlgorithm: RateKitThrottlerOptions['algorithm'], throttler: ThrottlerOptions & { name: string }, classRef: Type<unknown>, handler: Handler, method: string): void {
    const name = throttler.name;
    const targets = [handler, classRef];
    if (!THROTTLE_KEYS.some((key) => this.reflector.getAllAndOverride<unknown>(key + name, targets) !== undefined)) return;
    if (this.reflector.getAllAndOverride<boolean>(THROTTLER_SKIP + name, targets)) return;
    const ratekit = mergeRateKitOptions([
      this.reflector.get<RateKitThrottlerOptions | undefined>(THROTTLER_RATEKIT + name, handler),
      this.reflector.get<RateKitThrottlerOptions | undefined>(THROTTLER_RATEKIT + name, classRef),
      throttler,
      { algorithm: moduleAlgorithm },
    ]);
    // As the guard: the route's or its class's values, else the throttler's.
    const limit = this.reflector.getAllAndOverride<Resolvable<number>>(THROTTLER_LIMIT + name, targets) || throttler.limit;
    const ttl = this.reflector.getAllAndOverride<Resolvable<number>>(THROTTLER_TTL + name, targets) || throttler.ttl;
    const blockDuration = this.reflector.getAllAndOverride<Resolvable<number>>(THROTTLER_BLOCK_DURATION + name, targets) || throttler.blockDuration;
    checkThrottler(`@Throttle(${classRef.name}.${method}).${name}`, name, ratekit, limit, ttl, blockDuration);
  }
}
Injectable()(ThrottlerRouteCheck);
Inject(getOptionsToken())(ThrottlerRouteCheck, undefined, 0);
Inject(DiscoveryService)(ThrottlerRouteCheck, undefined, 1);
Inject(Reflector)(ThrottlerRouteCheck, undefined, 2);
