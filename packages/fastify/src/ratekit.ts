/**
 * ratekit mode: the plugin on @ratekit/core's gate. The gate keys the request (`keyGenerator`, or
 * `request.ip`, which Fastify resolves past its own `trustProxy`, grouped by `ipv6Subnet`),
 * decides and builds the header list; this file supplies what Fastify differs in: limiters attached
 * to routes at their `hook` stage (`onRoute`, `config.rateLimit`, the `rateLimit()` and
 * `createRateLimit()` decorators), fields set with `reply.header`, `onExceeding`/`onExceeded`, and
 * a refusal thrown into Fastify's error handling (`errorResponseBuilder`). @fastify/rate-limit's
 * option names are read in `ratekit-options.ts`, its per-request options in
 * `ratekit-extras.ts` (beside this file: ratekit mode never runs the imitation in `compat/`).
 *
 * @module
 */
import { createGate, type Gate, type HeaderList, holdFor, memoryStore, type RateKitError, type RateLimitStore } from '@ratekit/core';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { createSteps, type Outcome, type Shared, type Steps } from './ratekit-extras.js';
import { groupNamespaces, resolveRegistration, resolveRouteSettings, type Settings } from './ratekit-options.js';
import { refusalError } from './refusal.js';
import type { RateLimitChecker, RateLimitHookHandler, RateLimitOptions, RateLimitPluginOptions } from './types.js';

/** The stages a limiter can run at, in lifecycle order. */
const STAGES = ['onRequest', 'preParsing', 'preValidation', 'preHandler'] as const;

/** Marks the hooks this plugin made, with the limiter they run, so a route never gets the same limiter twice. */
const kLimiter: unique symbol = Symbol.for('@ratekit/fastify.limiter');

/** One limiter: its settings, its steps on the gate, and its hook. */
interface Limiter {
  readonly settings: Settings;
  readonly steps: Steps;
  readonly hook: RateLimitHookHandler;
}

type Done = (error?: unknown) => void;

/** Registers ratekit mode on `fastify` (`fastifyRateLimit` chose it from the options). @throws {RateKitOptionError} naming a bad option */
export function registerRateKit(fastify: FastifyInstance, options: RateLimitPluginOptions): void {
  const log = fastify.log;
  const registration = resolveRegistration(options);
  const { base, nameSpace } = registration;
  let store: RateLimitStore | undefined = registration.store;
  if (store === undefined) {
    const memory = memoryStore({ maxKeys: registration.cache });
    fastify.addHook('onClose', (_instance, done) => {
      memory.dispose();
      done();
    });
    store = memory;
  }
  const shared = { store, now: registration.now, onError: (error: RateKitError) => log.error({ err: error }, error.message), refusalCache: registration.refusalCache };
  const groupNamespace = groupNamespaces(nameSpace);
  let sequence = 0;

  function build(settings: Settings, own: string, where: string, optionPath: string): Limiter {
    const namespace = groupNamespace(settings, where, optionPath) ?? own;
    const limiter = { settings, steps: createSteps(gateOf(settings, shared, namespace), settings, shared, namespace) } as { settings: Settings; steps: Steps; hook: RateLimitHookHandler };
    limiter.hook = createHook(limiter);
    return limiter;
  }

  const plugin = build(registration.settings, `${nameSpace}global`, 'the plugin options', '');
  const routeLimiter = (options: unknown, path: string, namespace: string, where: string) => build(resolveRouteSettings(base, options, path), `${nameSpace}${namespace}`, where, path);

  fastify.addHook('onRoute', (route) => {
    const config = (route.config as { rateLimit?: unknown } | undefined)?.rateLimit;
    if (config === false || ((config === undefined || config === null) && !registration.global)) return;
    const name = routeName(route);
    const limiter = config === undefined || config === null ? plugin : routeLimiter(config, 'config.rateLimit.', `route:${JSON.stringify(name)}`, name);
    const hooks = route as unknown as Record<string, unknown>;
    const runs = (fn: unknown) => typeof fn === 'function' && (fn as { [kLimiter]?: unknown })[kLimiter] === limiter;
    if (STAGES.some((stage) => (Array.isArray(hooks[stage]) ? (hooks[stage] as unknown[]) : [hooks[stage]]).some(runs))) return;
    // After the route's own hooks of that stage (Fastify runs instance hooks before route hooks).
    const stage = limiter.settings.hook;
    const existing = hooks[stage];
    hooks[stage] = existing === undefined || existing === null ? [limiter.hook] : [...(Array.isArray(existing) ? (existing as unknown[]) : [existing]), limiter.hook];
  });

  if (!fastify.hasDecorator('rateLimit')) {
    fastify.decorate('rateLimit', function rateLimit(options?: RateLimitOptions): RateLimitHookHandler {
      return options === undefined ? plugin.hook : routeLimiter(options, 'rateLimit(options).', `hook:${++sequence}`, `rateLimit() #${sequence}`).hook;
    });
  }
  if (!fastify.hasDecorator('createRateLimit')) {
    fastify.decorate('createRateLimit', function createRateLimit(options?: RateLimitOptions): RateLimitChecker {
      const { steps } = options === undefined ? plugin : routeLimiter(options, 'createRateLimit(options).', `check:${++sequence}`, `createRateLimit() #${sequence}`);
      return steps.check;
    });
  }
}

/** One limiter's gate: the request's key is `request.ip` (Fastify applied its `trustProxy`), so `X-Forwarded-For` is never read here. */
export function gateOf(settings: Settings, shared: Shared, prefix: string): Gate<FastifyRequest> {
  return createGate(
    { ...settings.gate, ...shared, prefix },
    { name: '@ratekit/fastify', standardHeaders: false, headers: { legacyReset: 'delta', combineLists: true }, optionNames: settings.optionNames, forwardedFor: () => undefined },
  );
}

/**
 * The Fastify hook of one limiter: callback-style, so a decision from the in-memory store
 * completes synchronously, with no promise. An admitted request gets its fields
 * (`addHeadersOnExceeding`) and `onExceeding`, and a `delay`-algorithm admission is held for its
 * `delayMs`; a refused one `onExceeded` (and `onBanReach`), its fields (`addHeaders`), and the
 * refusal goes to `done(error)`, so it reaches `setErrorHandler`. Works as `onRequest`,
 * `preValidation`, `preHandler` and `preParsing`; called with no callback, it returns a promise.
 */
function createHook(limiter: Limiter): RateLimitHookHandler {
  const { settings, steps } = limiter;
  const { hiddenOnPass, hiddenOnRefusal, onExceeding, onExceeded, onBanReach } = settings;

  function respond(request: FastifyRequest, reply: FastifyReply, outcome: Outcome, done: Done): void {
    if (outcome.key === undefined) return done();
    const { key, decision } = outcome;
    let error: object | undefined;
    try {
      if (decision.allowed) {
        write(reply, outcome.headers, hiddenOnPass);
        onExceeding?.(request, key);
      } else {
        onExceeded?.(request, key);
        if (outcome.banned === true) onBanReach?.(request, key);
        write(reply, outcome.headers, hiddenOnRefusal);
        error = refusalError(request, key, decision, outcome.banned === true, settings.errorResponseBuilder);
      }
    } catch (failure) {
      return done(failure);
    }
    if (error !== undefined) done(error);
    else if (decision.delayMs > 0) hold(reply, decision.delayMs, done);
    else done();
  }

  function run(request: FastifyRequest, reply: FastifyReply, done: Done): void {
    let outcome: ReturnType<Steps['decide']>;
    try {
      outcome = steps.decide(request);
    } catch (error) {
      return done(error);
    }
    if (outcome instanceof Promise) outcome.then((o) => respond(request, reply, o, done), done);
    else respond(request, reply, outcome, done);
  }

  function rateLimit(request: FastifyRequest, reply: FastifyReply, doneOrPayload?: unknown, preParsingDone?: (error: unknown, payload?: unknown) => void): Promise<void> | void {
    if (preParsingDone === undefined && typeof doneOrPayload !== 'function') {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- rejects with what `done` was given
      return new Promise((resolve, reject) => run(request, reply, (error) => (error === undefined || error === null ? resolve() : reject(error))));
    }
    run(request, reply, preParsingDone === undefined ? (doneOrPayload as Done) : (error) => preParsingDone(error ?? null, doneOrPayload));
  }

  return Object.assign(rateLimit as unknown as RateLimitHookHandler, { [kLimiter]: limiter });
}

/** Holds a `delay` admission for its `delayMs`, or until the client goes away (the gate's abort-aware `holdFor`). */
function hold(reply: FastifyReply, delayMs: number, done: Done): void {
  const gone = new AbortController();
  const abort = () => gone.abort();
  reply.raw.once('close', abort);
  void holdFor(delayMs, gone.signal).then(() => {
    reply.raw.off('close', abort);
    done();
  });
}

/** Sets the fields with `reply.header`, but the `hidden` names (lower case, from `addHeaders`/`addHeadersOnExceeding`). */
function write(reply: FastifyReply, headers: Readonly<HeaderList>, hidden: ReadonlySet<string> | undefined): void {
  for (let i = 0; i < headers.length; i++) {
    const [name, value] = headers[i]!;
    if (hidden === undefined || !hidden.has(name.toLowerCase())) reply.header(name, value);
  }
}

/** `GET /items`, with HEAD counted as GET (Fastify adds a HEAD route for each GET; they share a count). */
function routeName(route: RouteOptions): string {
  const methods = (Array.isArray(route.method) ? route.method : [route.method]).map((m) => (m === 'HEAD' ? 'GET' : m));
  return `${[...new Set(methods)].join(',')} ${route.url}`;
}
