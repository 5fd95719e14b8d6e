// The Redis part of upstream/run.mjs: rate-limiter-flexible's RateLimiterRedis.ioredis.test.js,
// RateLimiterRedis.redis.test.js and BurstyRateLimiter.test.js connect to 127.0.0.1:6379 and FLUSH
// it, so they get a throwaway redis-server of their own (scripts/lib/throwaway-redis.mjs: a free
// loopback port, no persistence, killed by stop()), and redis-port.cjs, preloaded into mocha, points
// their clients at it.
//
//   const redis = await startUpstreamRedis();
//   spawn(node, [mocha, ...redis.mochaArgs, ...], { env: { ...process.env, ...redis.env } });
//   ...
//   redis.stop();
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startThrowawayRedis } from '../../../scripts/lib/throwaway-redis.mjs';

const here = dirname(fileURLToPath(import.meta.url));

/** The test files that need the throwaway server (mocha paths, relative to .upstream/). */
export const REDIS_TEST_FILES = ['test/RateLimiterRedis.ioredis.test.js', 'test/RateLimiterRedis.redis.test.js', 'test/BurstyRateLimiter.test.js'];

/**
 * Starts the throwaway redis-server. Resolves `{ port, env, mochaArgs, stop }`: `env` holds
 * RATEKIT_UPSTREAM_REDIS_PORT for mocha's process, `mochaArgs` the `--require` of redis-port.cjs.
 * Exits the process (with a ✖ line) when redis-server cannot be started.
 */
export async function startUpstreamRedis() {
  const { port, stop } = await startThrowawayRedis();
  return {
    port,
    env: { RATEKIT_UPSTREAM_REDIS_PORT: String(port) },
    mochaArgs: ['--require', join(here, 'redis-port.cjs')],
    stop,
  };
}
