// Preloaded (node --require) into koa-ratelimit's own spec files, which stay unchanged. redis.spec.js
// builds `new Redis()`: 127.0.0.1:6379, which may be another program's Redis (the spec deletes its
// `limit:*` keys). This makes an ioredis client built with no arguments connect to the throwaway
// server whose port is in RATEKIT_UPSTREAM_REDIS_PORT instead. Clients given any argument are untouched.
'use strict';
const { dirname } = require('node:path');

const port = Number(process.env.RATEKIT_UPSTREAM_REDIS_PORT);
if (Number.isInteger(port)) {
  const resolved = require.resolve('ioredis', { paths: [dirname(__dirname)] });
  const ioredis = require(resolved);
  const Base = ioredis.default ?? ioredis.Redis ?? ioredis;
  class RedisOnTestPort extends Base {
    constructor(...args) {
      super(...(args.length === 0 ? [port, '127.0.0.1'] : args));
    }
  }
  // The module's other exports (Cluster, Command, ...) stay reachable on the replacement.
  for (const name of Object.keys(ioredis)) if (!(name in RedisOnTestPort)) RedisOnTestPort[name] = ioredis[name];
  for (const name of ['default', 'Redis']) Object.defineProperty(RedisOnTestPort, name, { value: RedisOnTestPort, enumerable: true });
  require.cache[resolved].exports = RedisOnTestPort;
}
