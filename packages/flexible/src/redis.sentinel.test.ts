import { describeWithService, type LocalRedisSentinel, redisSentinelService } from '@ratekit/test-utils';
import { types } from 'node:util';
import { Redis } from 'ioredis';
import { createSentinel } from 'redis5';
import { RateLimiterRedis } from './redis.js';

/**
 * RateLimiterRedis through each library's Sentinel client (ioredis
 * `new Redis({ sentinels, name })`, node-redis 5 `createSentinel`), on a
 * master, a replica and a sentinel of the test's own, across a failover:
 * the master is killed, the sentinel promotes the replica, the client
 * reconnects to it, and the same limiter carries on, without a restart (the
 * new master has never run our script: NOSCRIPT, then EVAL). Meanwhile each
 * call settles, with an Error, within `storeTimeoutMs` (plus a stated margin):
 * none hangs.
 *
 * What is not claimed: how many writes a failover loses (Redis replicates
 * asynchronously, so a count written just before the kill may be missing on
 * the new master; the test accepts any count ≥ 1 after the failover).
 */

const STORE_TIMEOUT_MS = 500;
/** A failed call settles within the store timeout plus this, on a busy machine. */
const SETTLE_MARGIN_MS = 1_500;
/** How long the failover may take: the sentinel's down-after (1 s), its election and the client's reconnection. */
const FAILOVER_BOUND_MS = 45_000;

const SENTINEL_CLIENTS: Record<string, (sentinel: LocalRedisSentinel) => Promise<{ client: object; close: () => Promise<unknown> }>> = {
  'ioredis (sentinels)': async (sentinel) => {
    const client = new Redis({ sentinels: [...sentinel.sentinels], name: sentinel.masterName, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    client.on('error', () => {}); // errors reach the calls that fail
    await new Promise<void>((resolve, reject) => client.once('ready', resolve).once('error', reject));
    return { client, close: async () => client.disconnect() };
  },
  'node-redis 5 (createSentinel)': async (sentinel) => {
    const client = createSentinel({ name: sentinel.masterName, sentinelRootNodes: [...sentinel.sentinels] });
    client.on('error', () => {});
    await client.connect();
    return { client, close: () => client.close() };
  },
};

const { isNativeError } = types;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const [name, connect] of Object.entries(SENTINEL_CLIENTS)) {
  describeWithService(redisSentinelService, `RateLimiterRedis through ${name}`, (server) => {
    it("decides on the master in rlf's layout, and carries on after a failover with the same limiter", async () => {
      const sentinel = server() as LocalRedisSentinel;
      const { client, close } = await connect(sentinel);
      const inspect = async (fn: (node: Redis) => Promise<unknown>) => {
        const address = await sentinel.masterAddress();
        const node = new Redis(address.port, address.host);
        try {
          return await fn(node);
        } finally {
          node.disconnect();
        }
      };
      try {
        const rl = new RateLimiterRedis({ storeClient: client, keyPrefix: `rk-flex-sentinel-${process.pid}`, points: 100, duration: 60, storeTimeoutMs: STORE_TIMEOUT_MS });
        expect((await rl.consume('k')).consumedPoints).toBe(1);
        expect((await rl.consume('k')).consumedPoints).toBe(2);
        expect(await inspect((node) => node.get(rl.getKey('k')))).toBe('2');

        const before = await sentinel.masterAddress();
        process.kill(sentinel.master.pid, 'SIGKILL');

        // Until the same limiter decides again; every failure on the way is an Error, in time.
        const deadline = Date.now() + FAILOVER_BOUND_MS;
        let consumed: number | undefined;
        let failures = 0;
        while (consumed === undefined) {
          if (Date.now() > deadline) throw new Error(`no decision within ${FAILOVER_BOUND_MS} ms of the kill (${failures} failed calls)`);
          const started = performance.now();
          try {
            consumed = (await rl.consume('k')).consumedPoints;
          } catch (error) {
            failures++;
            // An Error (some of node-redis's come from Node's own realm, not the test's: isNativeError).
            if (!isNativeError(error)) throw new Error(`a failure that is not an Error: ${String(error)}`, { cause: error });
            expect(performance.now() - started).toBeLessThan(STORE_TIMEOUT_MS + SETTLE_MARGIN_MS);
            await sleep(100);
          }
        }
        const after = await sentinel.masterAddress();
        expect(after.port).not.toBe(before.port);
        expect(consumed).toBeGreaterThanOrEqual(1);
        // The new master holds the count in rlf's layout (an integer string), with the window's TTL. A call
        // that timed out may still have landed after its timeout (storeTimeoutMs's documented caveat), so
        // the count is at least the one answered.
        const stored = (await inspect((node) => node.get(rl.getKey('k')))) as string;
        expect(stored).toMatch(/^\d+$/);
        expect(Number(stored)).toBeGreaterThanOrEqual(consumed);
        const ttl = (await inspect((node) => node.ttl(rl.getKey('k')))) as number;
        expect(ttl).toBeGreaterThan(0);
        expect(ttl).toBeLessThanOrEqual(60);
      } finally {
        await close();
      }
    }, 90_000);
  });
}
