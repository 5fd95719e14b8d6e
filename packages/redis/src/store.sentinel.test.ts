import { ask, describeWithService, freshNamespace, type LocalRedisSentinel, limits, redisSentinelService } from '@ratekit/test-utils';
import { Redis } from 'ioredis';
import { createClient, createSentinel } from 'redis';
import { DECISION_FUNCTION } from './scripts.js';
import { type RedisClientLike, redisStore } from './store.js';

/**
 * The Redis store through each library's Sentinel client (ioredis `new
 * Redis({ sentinels, name })`, node-redis `createSentinel`), on a master, a
 * replica and a sentinel of the test's own: it decides on the master the
 * sentinel names, with the function library, loading it when the master
 * lacks it. (Failover itself: test/redis-failover.test.ts.)
 */

const SENTINEL_CLIENTS: Record<string, (sentinel: LocalRedisSentinel) => Promise<{ client: RedisClientLike; close: () => Promise<unknown> }>> = {
  'ioredis (sentinels)': async (sentinel) => {
    const client = new Redis({ sentinels: [...sentinel.sentinels], name: sentinel.masterName });
    await new Promise<void>((resolve, reject) => client.once('ready', resolve).once('error', reject));
    return { client, close: () => client.quit() };
  },
  'node-redis (createSentinel)': async (sentinel) => {
    const client = createSentinel({ name: sentinel.masterName, sentinelRootNodes: [...sentinel.sentinels] });
    client.on('error', () => {}); // errors reach the commands that fail; a listener keeps the process alive
    await client.connect();
    return { client, close: () => client.close() };
  },
};

describeWithService(redisSentinelService, 'redisStore through a Sentinel client', (server) => {
  for (const [name, connect] of Object.entries(SENTINEL_CLIENTS)) {
    it(`${name}: decides on the master with FCALL, loading the function library where it is missing (never the script)`, async () => {
      const sentinel = server() as LocalRedisSentinel;
      const admin = await createClient({ socket: { host: '127.0.0.1', port: sentinel.master.port } }).connect();
      const { client, close } = await connect(sentinel);
      try {
        await admin.sendCommand(['FUNCTION', 'FLUSH']);
        await admin.configResetStat();
        const store = redisStore({ client });
        const namespace = freshNamespace('sentinel');
        const policy = limits({ limit: 2, windowMs: 60_000 });
        const decisions = [];
        for (let i = 0; i < 3; i++) decisions.push(await ask(store, { namespace, limits: policy }));
        expect(decisions.map((d) => d.allowed)).toEqual([true, true, false]);
        expect(await admin.sendCommand(['FUNCTION', 'LIST', 'LIBRARYNAME', DECISION_FUNCTION])).toHaveLength(1);
        const stats = await admin.info('commandstats');
        const calls = (command: string) => Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(stats)?.[1] ?? 0);
        expect({ fcall: calls('fcall'), evalsha: calls('evalsha'), eval: calls('eval'), load: calls('function\\|load') }).toEqual({ fcall: 4, evalsha: 0, eval: 0, load: 1 });
      } finally {
        await close();
        await admin.quit();
      }
    });
  }
});
