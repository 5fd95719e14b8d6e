// The server side of the flood and fleet parts: what the app scripts in
// bench/http-servers/redis-<framework>.mjs share. Each script builds one app
// with the limiter named in argv[2]:
//
//   bare                    no limiter
//   ratekit-memory          our adapter in ratekit mode on core's memory store (the flood's reference refusal)
//   ratekit-redis           our adapter on @ratekit/redis, default options (the refusal cache, when the build has one)
//   ratekit-redis-nocache   the same with the refusal cache off (withoutRefusalCache)
//   ratekit-redis-noheaders ratekit-redis with the rate-limit headers off (HEADERS_OFF: express and fastify
//                           `standardHeaders: false, legacyHeaders: false`, no header at all; koa
//                           `legacyHeaders: false`, which leaves Retry-After on refusals, as koa-ratelimit)
//   rlflex-redis            rate-limiter-flexible's RateLimiterRedis, `inMemoryBlockOnConsumed: limit + 1`,
//                           in its wiki's minimal middleware (lib/http-rlflex.mjs's headers)
//   incumbent-redis         the framework's incumbent on Redis (express-rate-limit + rate-limit-redis,
//                           @fastify/rate-limit with `redis`, koa-ratelimit's redis driver)
//
// The rest comes from the environment the parent sets (APP_ENV): the Redis
// URL, the limit and window (a fixed window everywhere, the one algorithm
// every contender has), and whether the app trusts the loopback address as its proxy, so that
// the fleet part's X-Forwarded-For addresses become the client keys.
// Every limiter keys by client IP, its own default way; each app writes
// under its own prefix, `bench:<limiter>:`.

import { RateLimiterRedis } from 'rate-limiter-flexible';
import Redis from 'ioredis';
import { flexibleHeaders, TOO_MANY } from './http-rlflex.mjs';

/** The environment variables the parent sets for an app process. */
export const APP_ENV = {
  redisUrl: 'BENCH_APP_REDIS_URL',
  limit: 'BENCH_APP_LIMIT',
  windowMs: 'BENCH_APP_WINDOW_MS',
  trustProxy: 'BENCH_APP_TRUST_PROXY',
};

/** createLimiter's option that turns our in-process refusal cache off (issue 26 §1). */
export const REFUSAL_CACHE_OFF = { refusalCache: false };

/**
 * `store` as a store the core keeps no refusal cache for: the same store, `shared: false` (the core
 * keeps one only for shared stores). The cache-off row goes through the adapters this way because
 * they do not all take REFUSAL_CACHE_OFF in ratekit mode (express ignores an unknown option with a
 * warning, koa refuses it); the flood part checks that every refusal then reaches Redis.
 */
export function withoutRefusalCache(store) {
  return { ...store, shared: false };
}

/**
 * Our adapters' options that turn the rate-limit headers off, per framework (issue 31 §2). Koa's
 * ratekit mode sends Retry-After on every refusal whatever its options (koa-ratelimit does), so its
 * row still sends that one header.
 */
export const HEADERS_OFF = {
  express: { standardHeaders: false, legacyHeaders: false },
  fastify: { standardHeaders: false, legacyHeaders: false },
  koa: { standardHeaders: false, legacyHeaders: false },
};

/** Every limiter id an app script takes, in table order. */
export const LIMITERS = ['bare', 'ratekit-memory', 'ratekit-redis', 'ratekit-redis-noheaders', 'ratekit-redis-nocache', 'rlflex-redis', 'incumbent-redis'];

/**
 * This process's settings, from argv[2] and APP_ENV.
 * @returns {{ limiter: string, limit: number, windowMs: number, trustProxy: boolean, prefix: string, redis: () => Promise<Redis> }}
 *   `redis()` connects one ioredis client (once per process; none for `bare` and `ratekit-memory`)
 */
export function appSettings(limiter, env = process.env) {
  if (!LIMITERS.includes(limiter)) throw new Error(`unknown limiter ${JSON.stringify(limiter)}; expected one of ${LIMITERS.join(', ')}`);
  const number = (name) => {
    const n = Number(env[name]);
    if (!(n > 0)) throw new Error(`expected ${name} to be a positive number, got ${JSON.stringify(env[name])}`);
    return n;
  };
  let client;
  return {
    limiter,
    limit: limiter === 'bare' ? Number.NaN : number(APP_ENV.limit),
    windowMs: limiter === 'bare' ? Number.NaN : number(APP_ENV.windowMs),
    trustProxy: env[APP_ENV.trustProxy] === '1',
    // A twin of --against (lib/against.mjs) keeps its own keys: `bench:<limiter>@ref:`.
    prefix: `bench:${limiter}${env.BENCH_AGAINST_ROOT ? '@ref' : ''}:`,
    async redis() {
      if (client === undefined) {
        const url = env[APP_ENV.redisUrl];
        if (!url) throw new Error(`${APP_ENV.redisUrl} is not set`);
        client = new Redis(url, { lazyConnect: true });
        await client.connect();
      }
      return client;
    },
    close: () => client?.quit(),
  };
}

/**
 * rate-limiter-flexible on Redis as its README advises against a flood: a refused key is then
 * answered from process memory until its window ends (`inMemoryBlockOnConsumed` one above the
 * points, `inMemoryBlockDuration` unset: blocked for `msBeforeNext`).
 *
 * @returns {{ consume: (key: string) => Promise<{ allowed: boolean, headers: Record<string, number> }> }}
 */
export function flexibleRedis(settings, client) {
  const limiter = new RateLimiterRedis({
    storeClient: client,
    points: settings.limit,
    duration: settings.windowMs / 1_000,
    keyPrefix: settings.prefix.slice(0, -1), // it adds ':' itself
    inMemoryBlockOnConsumed: settings.limit + 1,
  });
  const headers = flexibleHeaders(settings.limit);
  return {
    consume: (key) =>
      limiter.consume(key).then(
        (res) => ({ allowed: true, headers: headers(res, false) }),
        (res) => {
          if (res instanceof Error) throw res;
          return { allowed: false, headers: headers(res, true) };
        },
      ),
  };
}

export { TOO_MANY };

/** The parent's side: the app script of a framework (express, fastify, koa). */
export function appScript(framework) {
  return new URL(`../http-servers/redis-${framework}.mjs`, import.meta.url).pathname;
}

/** The parent's side: the environment of an app process (APP_ENV) on top of ours. */
export function appEnvironment({ redisUrl, limit, windowMs, trustProxy = false }, env = process.env) {
  return {
    ...env,
    [APP_ENV.redisUrl]: redisUrl,
    [APP_ENV.limit]: String(limit),
    [APP_ENV.windowMs]: String(windowMs),
    [APP_ENV.trustProxy]: trustProxy ? '1' : '0',
  };
}

/**
 * Whether the built @ratekit/core takes REFUSAL_CACHE_OFF: a limiter on a shared store built with
 * it is refused (RateKitOptionError naming the option) by a core that has no refusal cache.
 * @returns {Promise<{ supported: boolean, option: string, detail: string }>}
 */
export async function refusalCacheSupport(loadCore) {
  const { createLimiter } = await loadCore();
  const [option] = Object.keys(REFUSAL_CACHE_OFF);
  const store = { name: 'probe', shared: true, clock: 'caller', evaluate: () => Promise.reject(new Error('unused')), resetKey: async () => {} };
  try {
    createLimiter({ limits: { limit: 1, windowMs: 1_000 }, store, ...REFUSAL_CACHE_OFF });
    return { supported: true, option, detail: `the built core takes \`${option}: false\`` };
  } catch (error) {
    if (error?.code === 'ERR_RATEKIT_INVALID_OPTION') return { supported: false, option, detail: `the built core refuses \`${option}\`: ${error.message}` };
    throw error;
  }
}
