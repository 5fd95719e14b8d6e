// `@upstash/redis` for upstash/ratelimit-js's tests under `run.mjs --tcp` (the runner points the test files'
// `@upstash/redis` here through .upstream/tsconfig.json `paths`; nothing else imports this file).
//
// `Redis` (new Redis({ url, token }) and Redis.fromEnv(…)) is the real @upstash/redis client (HTTP) for everything
// the tests do themselves (FLUSHDB, SCRIPT FLUSH, GET, SADD, pipelines …), plus an ioredis connection to the
// same logical database, which the Ratelimit under test is meant to use:
// - `defineCommand` is the ioredis client's: @ratekit/upstash's script runner (src/script-runner.ts) then
//   takes the client for an ioredis one and sends its scripts over TCP (@ratekit/redis's transport);
// - `evalsha` and `eval` answer both callers: ioredis's form `(sha | script, numberOfKeys, ...keys, ...args)`
//   goes over TCP, @upstash/redis's form `(sha | script, keys[], args[])` over HTTP as before.
// The REST endpoint of each region is one logical database (run.mjs, REGIONS): RATEKIT_UPSTREAM_TCP holds
// `{ port, databases: { <REST url>: <database> } }`, so the TCP connection of a client opens the database its
// URL serves. One connection per database, shared by the file's clients, closed when the process exits.
import { Redis as UpstashRedis } from '@upstash/redis';
import IORedis from 'ioredis';

export * from '@upstash/redis';

const config = JSON.parse(process.env.RATEKIT_UPSTREAM_TCP ?? 'null');
if (config === null) throw new Error('tcp-redis.mjs: RATEKIT_UPSTREAM_TCP is not set (run it through packages/upstash/upstream/run.mjs --tcp)');

const connections = new Map();

/** The ioredis connection to the logical database behind the REST endpoint `url`. */
function connectionFor(url) {
  const database = config.databases[url];
  if (database === undefined) throw new Error(`tcp-redis.mjs: no logical database is known for the REST endpoint ${url}`);
  let connection = connections.get(database);
  if (connection === undefined) {
    connection = new IORedis({ host: '127.0.0.1', port: config.port, db: database, maxRetriesPerRequest: 1 });
    connections.set(database, connection);
  }
  return connection;
}

/** `http` (an @upstash/redis client, maybe its auto-pipelining proxy) with `tcp`'s script methods beside its own. */
function withTcp(http, tcp) {
  const ours = {
    defineCommand: tcp.defineCommand.bind(tcp),
    evalsha: (sha, keys, ...rest) => (typeof keys === 'number' ? tcp.evalsha(sha, keys, ...rest) : http.evalsha(sha, keys, ...rest)),
    eval: (script, keys, ...rest) => (typeof keys === 'number' ? tcp.eval(script, keys, ...rest) : http.eval(script, keys, ...rest)),
  };
  return new Proxy(http, {
    get: (target, property) => (Object.hasOwn(ours, property) ? ours[property] : target[property]),
    has: (target, property) => Object.hasOwn(ours, property) || property in target,
    // `{ ...redis, evalsha: … }` (ratelimit.test.ts "timeout") copies own properties: ours are among them.
    ownKeys: (target) => [...new Set([...Reflect.ownKeys(target), ...Object.keys(ours)])],
    getOwnPropertyDescriptor: (target, property) =>
      Object.hasOwn(ours, property) ? { value: ours[property], writable: true, enumerable: true, configurable: true } : Reflect.getOwnPropertyDescriptor(target, property),
  });
}

export class Redis {
  /** @param {ConstructorParameters<typeof UpstashRedis>[0]} options */
  constructor(options) {
    return withTcp(new UpstashRedis(options), connectionFor(options.url));
  }

  static fromEnv(options) {
    return withTcp(UpstashRedis.fromEnv(options), connectionFor(process.env.UPSTASH_REDIS_REST_URL ?? process.env.KV_REST_API_URL));
  }
}

process.on('exit', () => {
  for (const connection of connections.values()) connection.disconnect();
});
