// Preloaded (mocha --require) into rate-limiter-flexible's own test files, which stay unchanged.
// RateLimiterRedis.{ioredis,redis}.test.js and BurstyRateLimiter.test.js connect to 127.0.0.1:6379
// (`new Redis()`, `new Redis({ port: 6379, host: '127.0.0.1' })`, `redis.createClient({ socket: { host,
// port: 6379 } })`) and FLUSH that database after each test: on this machine 6379 is a shared Redis.
// This points those clients at the throwaway redis-server whose port is in RATEKIT_UPSTREAM_REDIS_PORT
// instead (upstream/run.mjs starts it). Only clients aimed at the default port are moved; any other
// address is left as given.
'use strict';
const { dirname } = require('node:path');

const port = Number(process.env.RATEKIT_UPSTREAM_REDIS_PORT);
const DEFAULT_PORT = 6379;

if (Number.isInteger(port) && port > 0) {
  const from = { paths: [dirname(__dirname)] };

  // ioredis: the module's export is the Redis class (also as .default and .Redis).
  const ioredisPath = require.resolve('ioredis', from);
  const ioredis = require(ioredisPath);
  const Base = ioredis.default ?? ioredis.Redis ?? ioredis;
  /** `new Redis()`, `new Redis(6379[, host][, options])` or `new Redis({ port: 6379, … })`: on the throwaway port. */
  const onTestPort = (args) => {
    if (args.length === 0 || (args.length === 1 && args[0] === undefined)) return [port, '127.0.0.1'];
    const [first, ...rest] = args;
    if (first === DEFAULT_PORT) return [port, ...rest];
    if (typeof first === 'object' && first !== null && (first.port === undefined || first.port === DEFAULT_PORT) && first.path === undefined && first.sentinels === undefined) {
      return [{ ...first, port, host: first.host ?? '127.0.0.1' }, ...rest];
    }
    return args;
  };
  class RedisOnTestPort extends Base {
    constructor(...args) {
      super(...onTestPort(args));
    }
  }
  for (const name of Object.keys(ioredis)) if (!(name in RedisOnTestPort)) RedisOnTestPort[name] = ioredis[name];
  for (const name of ['default', 'Redis']) Object.defineProperty(RedisOnTestPort, name, { value: RedisOnTestPort, enumerable: true });
  require.cache[ioredisPath].exports = RedisOnTestPort;

  // node-redis: createClient() with no address, or with socket.port 6379.
  const nodeRedis = require(require.resolve('redis', from));
  const createClient = nodeRedis.createClient;
  nodeRedis.createClient = (options = {}) => {
    if (options.url !== undefined) return createClient(options);
    const socket = options.socket ?? {};
    if (socket.port !== undefined && socket.port !== DEFAULT_PORT) return createClient(options);
    return createClient({ ...options, socket: { ...socket, host: socket.host ?? '127.0.0.1', port } });
  };
}
