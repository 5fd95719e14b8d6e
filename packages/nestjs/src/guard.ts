import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { advertisedQuota, ipKeyGenerator, rateLimitHeaders, RateKitOptionError } from '@ratekit/core';
import { THROTTLER_BLOCK_DURATION, THROTTLER_KEY_GENERATOR, THROTTLER_LIMIT, THROTTLER_RATEKIT, THROTTLER_SKIP, THROTTLER_TRACKER, THROTTLER_TTL } from './constants.js';
import { ThrottlerException, throttlerMessage } from './exception.js';
import type { ThrottlerLimitDetail, ThrottlerRequest } from './guard-types.js';
import { sha256 } from './hash.js';
import type { RateKitThrottlerOptions, Resolvable, ThrottlerGenerateKeyFunction, ThrottlerGetTrackerFunction, ThrottlerHttpObject, ThrottlerModuleOptions, ThrottlerOptions } from './options.js';
import { createPolicyDecider, isRateKitMode, type PolicyDecider, type PolicyEntry, wholeSeconds } from './policy.js';
import { getOptionsToken, getStorageToken } from './providers.js';
import { mergeRateKitOptions } from './route-options.js';
import type { ThrottlerStorage } from './storage.js';

/** What the guard calls on a response: `header(name, value)`, as Express's `res` and Fastify's reply have it. */
interface HeaderSetter {
  header(name: string, value: string | number): unknown;
}

type CommonOptions = Pick<ThrottlerOptions, 'skipIf' | 'ignoreUserAgents' | 'getTracker' | 'generateKey' | 'setHeaders'>;

/**
 * The guard, as @nestjs/throttler 6's `ThrottlerGuard`: apply it globally (`APP_GUARD`) or with
 * `@UseGuards(ThrottlerGuard)`, and extend it to change `getTracker`, `generateKey`, `shouldSkip`,
 * `getRequestResponse`, `throwThrottlingException`, `getErrorMessage` or `handleRequest`.
 *
 * - @nestjs/throttler's mode (the default): for each named throttler of the route, in order of
 *   `ttl`, `handleRequest` counts one hit in the storage (`increment`), sets
 *   `X-RateLimit-Limit/-Remaining/-Reset[-<name>]`, and on a refusal `Retry-After[-<name>]` and
 *   throws a {@link ThrottlerException} (429).
 * - The ratekit mode (any ratekit option, see `RateKitModuleOptions`): the route's throttlers are
 *   one all-or-nothing policy, decided in one store call; `handleRequest` is not called.
 *
 * @throws {ThrottlerException} from `canActivate` when a throttler refuses the request.
 * @throws {RateKitOptionError} from `onModuleInit` on a bad ratekit option.
 * @example
 * ```ts
 * @Injectable()
 * export class GqlThrottlerGuard extends ThrottlerGuard {
 *   protected override getRequestResponse(context: ExecutionContext) {
 *     const ctx = GqlExecutionContext.create(context).getContext();
 *     return { req: ctx.req, res: ctx.res };
 *   }
 * }
 * ```
 */
export class ThrottlerGuard implements CanActivate {
  protected headerPrefix = 'X-RateLimit';
  protected errorMessage = throttlerMessage;
  protected throttlers!: Array<ThrottlerOptions>;
  protected commonOptions!: CommonOptions;
  /** The ratekit mode's decider; undefined in @nestjs/throttler's mode. */
  private policyDecider: PolicyDecider | undefined;
  /** The prefix length IPv6 trackers are grouped by, or false. */
  private ipv6SubnetPrefix: number | false = false;
  /** The module's own ratekit options, the last level of every throttler's (see `mergeRateKitOptions`). */
  private moduleRateKit: RateKitThrottlerOptions = {};

  constructor(
    protected readonly options: ThrottlerModuleOptions,
    protected readonly storageService: ThrottlerStorage,
    protected readonly reflector: Reflector,
  ) {}

  async onModuleInit(): Promise<void> {
    // First: it checks `throttlers` and `policy`.
    const ratekit = isRateKitMode(this.options);
    const list = Array.isArray(this.options) ? this.options : this.options.throttlers;
    this.throttlers = [...list]
      .sort((first, second) => {
        if (typeof first.ttl === 'function') return 1;
        if (typeof second.ttl === 'function') return 0;
        return first.ttl - second.ttl;
      })
      .map((throttler) => ({ ...throttler, name: throttler.name ?? 'default' }));
    this.commonOptions = Array.isArray(this.options)
      ? {}
      : {
          skipIf: this.options.skipIf,
          ignoreUserAgents: this.options.ignoreUserAgents,
          getTracker: this.options.getTracker,
          generateKey: this.options.generateKey,
          setHeaders: this.options.setHeaders,
        };
    this.commonOptions.getTracker ??= this.getTracker.bind(this);
    this.commonOptions.generateKey ??= this.generateKey.bind(this);
    const subnet = Array.isArray(this.options) ? undefined : this.options.ipv6SubnetPrefix;
    if (subnet !== undefined && subnet !== false && !(Number.isInteger(subnet) && subnet >= 1 && subnet <= 128)) {
      throw new RateKitOptionError('ipv6SubnetPrefix', 'an integer from 1 to 128, or false', subnet);
    }
    this.ipv6SubnetPrefix = subnet ?? (ratekit ? 56 : false);
    this.policyDecider = ratekit && !Array.isArray(this.options) ? createPolicyDecider(this.options) : undefined;
    this.moduleRateKit = Array.isArray(this.options) ? {} : { algorithm: this.options.algorithm };
  }

  /**
   * Decides the request against every throttler of its route.
   * @throws {ThrottlerException} when one refuses it
   */
  async canActivate(context: ExecutionContext): Promise<boolean> {
    const handler = context.getHandler();
    const classRef = context.getClass();
    if (await this.shouldSkip(context)) return true;
    const entries: PolicyEntry[] = [];
    const continues: boolean[] = [];
    for (const namedThrottler of this.throttlers) {
      const name = namedThrottler.name!;
      const skip = this.reflector.getAllAndOverride<boolean>(THROTTLER_SKIP + name, [handler, classRef]);
      const skipIf = namedThrottler.skipIf || this.commonOptions.skipIf;
      if (skip || skipIf?.(context)) {
        continues.push(true);
        continue;
      }
      // The route's or its class's values, else the throttler's.
      const routeOrClassLimit = this.reflector.getAllAndOverride<Resolvable<number> | undefined>(THROTTLER_LIMIT + name, [handler, classRef]);
      const routeOrClassTtl = this.reflector.getAllAndOverride<Resolvable<number> | undefined>(THROTTLER_TTL + name, [handler, classRef]);
      const routeOrClassBlockDuration = this.reflector.getAllAndOverride<Resolvable<number> | undefined>(THROTTLER_BLOCK_DURATION + name, [handler, classRef]);
      const routeOrClassGetTracker = this.reflector.getAllAndOverride<ThrottlerGetTrackerFunction | undefined>(THROTTLER_TRACKER + name, [handler, classRef]);
      const routeOrClassGenerateKey = this.reflector.getAllAndOverride<ThrottlerGenerateKeyFunction | undefined>(THROTTLER_KEY_GENERATOR + name, [handler, classRef]);
      const limit = await this.resolveValue(context, routeOrClassLimit || namedThrottler.limit);
      const ttl = await this.resolveValue(context, routeOrClassTtl || namedThrottler.ttl);
      const givenBlockDuration = routeOrClassBlockDuration || namedThrottler.blockDuration;
      const blockDuration = await this.resolveValue(context, givenBlockDuration || ttl);
      const getTracker = routeOrClassGetTracker || namedThrottler.getTracker || this.commonOptions.getTracker!;
      const generateKey = routeOrClassGenerateKey || namedThrottler.generateKey || this.commonOptions.generateKey!;
      if (this.policyDecider === undefined) {
        continues.push(await this.handleRequest({ context, limit, ttl, throttler: namedThrottler, blockDuration, getTracker, generateKey }));
        continue;
      }
      // The route's, its class's, the throttler's, the module's: a level naming an algorithm drops the burst of those after it.
      const ratekit = mergeRateKitOptions([
        this.reflector.get<RateKitThrottlerOptions | undefined>(THROTTLER_RATEKIT + name, handler),
        this.reflector.get<RateKitThrottlerOptions | undefined>(THROTTLER_RATEKIT + name, classRef),
        namedThrottler,
        this.moduleRateKit,
      ]);
      entries.push({
        throttler: namedThrottler,
        limit,
        ttl,
        blockDurationMs: ratekit.blockDurationMs ?? (givenBlockDuration === undefined ? undefined : blockDuration),
        algorithm: ratekit.algorithm,
        burst: ratekit.burst,
        getTracker,
        generateKey,
      });
    }
    if (this.policyDecider !== undefined && entries.length > 0) return this.handlePolicy(context, entries);
    return continues.every((cont) => cont);
  }

  /** Return true to let the request through without throttling it. */
  protected async shouldSkip(_context: ExecutionContext): Promise<boolean> {
    return false;
  }

  /**
   * @nestjs/throttler's mode: counts one hit for one throttler, sets its headers, and throws when
   * it is refused.
   * @throws {ThrottlerException}
   */
  protected async handleRequest(requestProps: ThrottlerRequest): Promise<boolean> {
    const { context, limit, ttl, throttler, blockDuration, getTracker, generateKey } = requestProps;
    const { req, res } = this.getRequestResponse(context);
    const response = res as HeaderSetter;
    if (this.ignoresUserAgent(req, throttler)) return true;
    const tracker = await getTracker(req, context);
    const key = generateKey(context, tracker, throttler.name!);
    const { totalHits, timeToExpire, isBlocked, timeToBlockExpire } = await this.storageService.increment(key, ttl, limit, blockDuration, throttler.name!);
    const suffix = headerSuffix(throttler.name!);
    const setHeaders = throttler.setHeaders ?? this.commonOptions.setHeaders ?? true;
    if (isBlocked) {
      if (setHeaders) response.header(`Retry-After${suffix}`, timeToBlockExpire);
      await this.throwThrottlingException(context, { limit, ttl, key, tracker, totalHits, timeToExpire, isBlocked, timeToBlockExpire });
    }
    if (setHeaders) {
      response.header(`${this.headerPrefix}-Limit${suffix}`, limit);
      // This hit is counted already, so the last allowed request reads 0.
      response.header(`${this.headerPrefix}-Remaining${suffix}`, Math.max(0, limit - totalHits));
      response.header(`${this.headerPrefix}-Reset${suffix}`, timeToExpire);
    }
    return true;
  }

  /**
   * The ratekit mode: decides every throttler of the route at once (one store call per distinct
   * tracker and key function), sets each throttler's headers and throws on a refusal.
   * @throws {ThrottlerException}
   */
  protected async handlePolicy(context: ExecutionContext, entries: PolicyEntry[]): Promise<boolean> {
    const { req, res } = this.getRequestResponse(context);
    const response = res as HeaderSetter;
    const counted = entries.filter((entry) => !this.ignoresUserAgent(req, entry.throttler));
    if (counted.length === 0) return true;
    const decider = this.policyDecider!;
    const outcome = await decider.decide(context, req, counted);
    for (const { entry, decision, refusing, retryAfterMs } of outcome.results) {
      if (!(entry.throttler.setHeaders ?? this.commonOptions.setHeaders ?? true)) continue;
      const suffix = headerSuffix(entry.throttler.name!);
      if (refusing) {
        response.header(`Retry-After${suffix}`, Math.max(1, wholeSeconds(retryAfterMs)));
        continue;
      }
      // The quota RateLimit-Policy advertises (a bucket's is at least its burst), so Limit is never below Remaining.
      response.header(`${this.headerPrefix}-Limit${suffix}`, Math.floor(advertisedQuota(decision)));
      response.header(`${this.headerPrefix}-Remaining${suffix}`, decision.remaining);
      response.header(`${this.headerPrefix}-Reset${suffix}`, wholeSeconds(decision.resetMs));
    }
    if (decider.standardHeaders !== false && (this.commonOptions.setHeaders ?? true)) {
      for (const { decision, key } of outcome.decisions) {
        const options = { standardHeaders: decider.standardHeaders, legacyHeaders: false, retryAfter: false, combineLists: true, partitionKey: key };
        for (const [name, value] of rateLimitHeaders(decision, options)) {
          response.header(name, value);
        }
      }
    }
    if (outcome.refused !== undefined) await this.throwThrottlingException(context, outcome.refused);
    return true;
  }

  /** The tracker of a request: its IP (`req.ip`; IPv6 grouped by `ipv6SubnetPrefix` when set). */
  protected async getTracker(req: ThrottlerHttpObject): Promise<string> {
    const ip: unknown = req.ip;
    if (this.ipv6SubnetPrefix === false || typeof ip !== 'string') return ip as string; // as upstream: req.ip as it is, even unset
    return ipKeyGenerator(ip, this.ipv6SubnetPrefix);
  }

  /** The request and response of a context (HTTP); override for GraphQL, WebSockets or RPC. */
  protected getRequestResponse(context: ExecutionContext): { req: ThrottlerHttpObject; res: ThrottlerHttpObject } {
    const http = context.switchToHttp();
    return { req: http.getRequest(), res: http.getResponse() };
  }

  /** The storage key: SHA-256 of the controller, the handler, the throttler and the tracker. */
  protected generateKey(context: ExecutionContext, suffix: string, name: string): string {
    return sha256(`${context.getClass().name}-${context.getHandler().name}-${name}-${suffix}`);
  }

  /**
   * Throws the refusal.
   * @throws {ThrottlerException}
   */
  protected async throwThrottlingException(context: ExecutionContext, throttlerLimitDetail: ThrottlerLimitDetail): Promise<void> {
    throw new ThrottlerException(await this.getErrorMessage(context, throttlerLimitDetail));
  }

  /** The refusal's message: the options' `errorMessage` (a string or a function), else the default. */
  protected async getErrorMessage(context: ExecutionContext, throttlerLimitDetail: ThrottlerLimitDetail): Promise<string> {
    if (Array.isArray(this.options) || !this.options.errorMessage) return this.errorMessage;
    return typeof this.options.errorMessage === 'function' ? this.options.errorMessage(context, throttlerLimitDetail) : this.options.errorMessage;
  }

  private ignoresUserAgent(req: ThrottlerHttpObject, throttler: ThrottlerOptions): boolean {
    const ignoreUserAgents = throttler.ignoreUserAgents ?? this.commonOptions.ignoreUserAgents;
    if (!Array.isArray(ignoreUserAgents)) return false;
    const headers = req.headers as Record<string, string | string[] | undefined> | undefined;
    // String(): as upstream's `pattern.test(value)`, which tests a missing header as "undefined".
    const userAgent = String(headers?.['user-agent']);
    return ignoreUserAgents.some((pattern) => pattern.test(userAgent));
  }

  private async resolveValue<T extends number | string | boolean>(context: ExecutionContext, value: Resolvable<T>): Promise<T> {
    return typeof value === 'function' ? value(context) : value;
  }
}
Injectable()(ThrottlerGuard);
Inject(getOptionsToken())(ThrottlerGuard, undefined, 0);
Inject(getStorageToken())(ThrottlerGuard, undefined, 1);
Inject(Reflector)(ThrottlerGuard, undefined, 2);

/** `-<name>` after a header of a throttler not named `default`. */
export function headerSuffix(name: string): string {
  return name === 'default' ? '' : `-${name}`;
}
