// Preloaded into @fastify/rate-limit's own test files (which stay unchanged): their ioredis clients
// connect to 127.0.0.1 on Redis's default port, which this machine's shared Redis may hold. This
// points every ioredis client that names no port at the throwaway server in RATEKIT_UPSTREAM_REDIS_PORT.
'use strict';
const Module = require('node:module');

const port = Number(process.env.RATEKIT_UPSTREAM_REDIS_PORT);
const load = Module._load;
const patched = new WeakMap();

Module._load = function loadWithRedisPort(request, parent, isMain) {
  const exported = load.call(this, request, parent, isMain);
  if (request !== 'ioredis' || !Number.isInteger(port)) return exported;
  let Redis = patched.get(exported);
  if (Redis === undefined) {
    const Original = exported.default ?? exported;
    Redis = new Proxy(Original, {
      construct(target, args, newTarget) {
        if (args.length === 0) args = [{ port }];
        else if (typeof args[0] === 'object' && args[0] !== null && args[0].port === undefined) args = [{ ...args[0], port }, ...args.slice(1)];
        return Reflect.construct(target, args, newTarget);
      },
    });
    patched.set(exported, Redis);
  }
  return Redis;
};
