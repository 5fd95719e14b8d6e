import { RateKitOptionError } from '@ratekit/core';
import { describeWithService, freshNamespace, redisService } from '@ratekit/test-utils';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { type IoRedisPubSubLike, type NodeRedisPubSubLike, redisTransport, type RedisTransportOptions, type SyncTransport } from './transport.js';

const fakeNodeRedis = (): NodeRedisPubSubLike => ({ isReady: true, publish: async () => 0, subscribe: async () => {}, unsubscribe: async () => {} });
const fakeIoRedis = (): IoRedisPubSubLike => ({
  status: 'ready',
  publish: async () => 0,
  subscribe: async () => 1,
  unsubscribe: async () => 0,
  on: () => undefined,
  off: () => undefined,
});

/** Polls `check` every 10 ms until it holds; fails with `what` after `timeoutMs`. */
async function eventually(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('redisTransport options', () => {
  it.each<[string, () => RedisTransportOptions, RegExp]>([
    ['no client', () => ({}) as never, /Expected `client` to be a node-redis \(redis 5\+\) or ioredis client, got undefined/],
    ['a client without pub/sub commands', () => ({ client: { isReady: true, publish: async () => 0 } as never }), /Expected `client` to be a node-redis/],
    [
      'the publishing client as the subscriber',
      () => {
        const client = fakeNodeRedis();
        return { client, subscriber: client };
      },
      /Expected `subscriber` to be a dedicated connection, not the publishing `client`/,
    ],
    ['clients of two libraries', () => ({ client: fakeNodeRedis(), subscriber: fakeIoRedis() }), /Expected `subscriber` to be a node-redis client like `client`, not an ioredis one, got an object/],
    ['no subscriber and a client without duplicate()', () => ({ client: fakeNodeRedis() }), /Expected `subscriber` to be a dedicated connection, since `client` has no duplicate\(\)/],
    ['an empty channel', () => ({ client: fakeIoRedis(), subscriber: fakeIoRedis(), channel: '' }), /Expected `channel` to be a non-empty string, got ""/],
  ])('throws a coded option error for %s', (_, options, message) => {
    expect(() => redisTransport(options())).toThrow(RateKitOptionError);
    expect(() => redisTransport(options())).toThrow(message);
  });

  it('accepts each library with a subscriber of its own kind', () => {
    expect(redisTransport({ client: fakeNodeRedis(), subscriber: fakeNodeRedis() }).connected).toBe(true);
    expect(redisTransport({ client: fakeIoRedis(), subscriber: fakeIoRedis() }).connected).toBe(true);
  });
});

/** The two supported libraries: a connected publishing client, and how to close it. */
const LIBRARIES = {
  'node-redis': async (url: string) => {
    const client = createClient({ url });
    client.on('error', () => {});
    await client.connect();
    return {
      client: client satisfies NodeRedisPubSubLike,
      open: () => client.isReady,
      close: () => client.close(),
    };
  },
  ioredis: async (url: string) => {
    const client = new Redis(url);
    client.on('error', () => {});
    await new Promise<void>((resolve, reject) => client.once('ready', resolve).once('error', reject));
    return {
      client: client satisfies IoRedisPubSubLike,
      open: () => client.status === 'ready',
      close: () => client.quit().then(() => undefined),
    };
  },
} as const;

describeWithService(redisService, 'redisTransport on Redis', (server) => {
  let admin: ReturnType<typeof createClient>;
  beforeAll(async () => {
    admin = createClient({ url: server().url });
    await admin.connect();
  });
  afterAll(async () => {
    await admin.close();
  });
  const subscribers = async (channel: string) => Number((await admin.pubSubNumSub(channel))[channel] ?? 0);

  describe.each(Object.keys(LIBRARIES) as Array<keyof typeof LIBRARIES>)('with %s', (library) => {
    it('delivers every message to every subscribed transport, the sender included, in order', async () => {
      const channel = freshNamespace('chan');
      const a = await LIBRARIES[library](server().url);
      const b = await LIBRARIES[library](server().url);
      const ta = redisTransport({ client: a.client, channel });
      const tb = redisTransport({ client: b.client, channel });
      const heard: Record<string, string[]> = { a: [], b: [] };
      await ta.subscribe((m) => heard.a!.push(m));
      await tb.subscribe((m) => heard.b!.push(m));
      for (const m of ['1', '2', '3']) await ta.publish(m);
      await tb.publish('4');
      await eventually('both transports to hear 4 messages', () => heard.a!.length === 4 && heard.b!.length === 4);
      expect(heard).toEqual({ a: ['1', '2', '3', '4'], b: ['1', '2', '3', '4'] });
      await Promise.all([ta.close(), tb.close()]);
      await Promise.all([a.close(), b.close()]);
    });

    it("closes the subscriber it duplicated, and leaves the caller's client open", async () => {
      const channel = freshNamespace('chan');
      const a = await LIBRARIES[library](server().url);
      const transport = redisTransport({ client: a.client, channel });
      await transport.subscribe(() => {});
      expect(await subscribers(channel)).toBe(1);
      await transport.close();
      await eventually('the duplicated subscriber to leave the channel', async () => (await subscribers(channel)) === 0);
      expect([transport.connected, a.open()]).toEqual([true, true]);
      await a.close();
    });

    it("unsubscribes a caller's subscriber without closing it", async () => {
      const channel = freshNamespace('chan');
      const a = await LIBRARIES[library](server().url);
      const sub = await LIBRARIES[library](server().url);
      const transport: SyncTransport = redisTransport({ client: a.client, subscriber: sub.client, channel });
      await transport.subscribe(() => {});
      expect(await subscribers(channel)).toBe(1);
      await transport.close();
      await eventually('the subscriber to leave the channel', async () => (await subscribers(channel)) === 0);
      expect(sub.open()).toBe(true);
      await Promise.all([a.close(), sub.close()]);
    });
  });
});
