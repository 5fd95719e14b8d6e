import calculateSlot from 'cluster-key-slot';
import { Cluster, Redis } from 'ioredis';
import { createClient as createClient4, createCluster as createCluster4 } from 'redis';
import { createClient as createClient5, createCluster as createCluster5 } from 'redis5';
import { isNodeRedis3, isRedisReady, redisTransport } from './redis-client.js';

/**
 * Which library a client is, from the client itself (never from a flag, so
 * node-redis 5 is recognised: rlf #314), and how a script call is sent. The
 * clients are built without connecting; the calls go to fakes.
 */
describe('redisTransport', () => {
  it.each([
    ['ioredis', () => new Redis({ lazyConnect: true }), 'ioredis', false],
    ['ioredis Cluster', () => new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true }), 'ioredis', true],
    ['node-redis 4', () => createClient4(), 'node-redis', false],
    ['node-redis 4 createCluster', () => createCluster4({ rootNodes: [{ url: 'redis://127.0.0.1:1' }] }), 'node-redis', true],
    ['node-redis 5', () => createClient5(), 'node-redis', false],
    ['node-redis 5 createCluster', () => createCluster5({ rootNodes: [{ url: 'redis://127.0.0.1:1' }] }), 'node-redis', true],
  ] as const)('recognises %s', (_, build, library, cluster) => {
    const transport = redisTransport(build());
    expect(transport?.library).toBe(library);
    expect(transport?.cluster).toBe(cluster);
    expect(transport?.slotOf === undefined).toBe(!cluster);
  });

  it('knows no other object (calls then reject), and not node-redis 3', () => {
    expect(redisTransport({ status: 'ready' })).toBeUndefined();
    expect(redisTransport(undefined)).toBeUndefined();
    const redis3 = { send_command: () => true, evalsha: () => true, eval: () => true };
    expect(isNodeRedis3(redis3)).toBe(true);
    expect(redisTransport(redis3)).toBeUndefined();
    expect(isNodeRedis3(new Redis({ lazyConnect: true }))).toBe(false);
  });

  it("an ioredis Cluster's slots count its keyPrefix, which ioredis puts before every key it sends", () => {
    const cluster = new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true, keyPrefix: 'app:' });
    expect(redisTransport(cluster)?.slotOf?.('rlflx:k')).toBe(calculateSlot('app:rlflx:k'));
  });

  it('EVALSHA, then EVAL with the script on NOSCRIPT only', async () => {
    const sent: string[] = [];
    let cached = false;
    const fake = {
      evalsha: async (sha: string, n: number, ...rest: string[]) => {
        sent.push(`EVALSHA ${sha} ${n} ${rest.join(' ')}`);
        if (!cached) throw new Error('NOSCRIPT No matching script');
        return 'ok';
      },
      eval: async (script: string, n: number, ...rest: string[]) => {
        sent.push(`EVAL ${script} ${n} ${rest.join(' ')}`);
        cached = true;
        return 'ok';
      },
    };
    const transport = redisTransport(fake)!;
    expect(await transport.run('return 1', 'abc', ['k'], ['a'])).toBe('ok');
    expect(await transport.run('return 1', 'abc', ['k'], ['a'])).toBe('ok');
    expect(sent).toEqual(['EVALSHA abc 1 k a', 'EVAL return 1 1 k a', 'EVALSHA abc 1 k a']);
    const failing = redisTransport({ evalsha: async () => Promise.reject(new Error('WRONGTYPE')), eval: async () => 'never' })!;
    await expect(failing.run('s', 'sha', ['k'], [])).rejects.toThrow('WRONGTYPE');
  });

  it('a node-redis cluster sends the script with sendCommand and its first key (node-redis 4 routes evalSha by no key: rlf #283)', async () => {
    const sent: unknown[] = [];
    const fake = {
      evalSha: async () => Promise.reject(new Error('must not be used')),
      eval: async () => Promise.reject(new Error('must not be used')),
      nodeClient: () => undefined,
      sendCommand: async (firstKey: string, readonly: boolean, args: string[]) => {
        sent.push([firstKey, readonly, args]);
        if (args[0] === 'EVALSHA') throw new Error('NOSCRIPT');
        return 'ok';
      },
    };
    expect(await redisTransport(fake)!.run('return 1', 'abc', ['{t}a', '{t}b'], ['x'])).toBe('ok');
    expect(sent).toEqual([
      ['{t}a', false, ['EVALSHA', 'abc', '2', '{t}a', '{t}b', 'x']],
      ['{t}a', false, ['EVAL', 'return 1', '2', '{t}a', '{t}b', 'x']],
    ]);
  });
});

describe('isRedisReady', () => {
  it('reads the real clients: not ready before connecting', () => {
    expect(isRedisReady(new Redis({ lazyConnect: true }), 'k', false)).toBe(false);
    expect(isRedisReady(createClient4(), 'k', false)).toBe(false);
    expect(isRedisReady(createClient5(), 'k', false)).toBe(false);
    expect(isRedisReady(createCluster4({ rootNodes: [{ url: 'redis://127.0.0.1:1' }] }), 'k', false)).toBe(false);
    expect(isRedisReady(createCluster5({ rootNodes: [{ url: 'redis://127.0.0.1:1' }] }), 'k', false)).toBe(false);
  });

  it("follows rlf's order on clients it does not know: ready unless they say otherwise", () => {
    expect(isRedisReady({ status: 'ready' }, 'k', false)).toBe(true);
    expect(isRedisReady({ isReady: () => true }, 'k', false)).toBe(true);
    expect(isRedisReady({ isReady: true }, 'k', false)).toBe(true);
    expect(isRedisReady({ isOpen: true, _slots: { getClient: () => ({ isReady: true }) } }, 'k', false)).toBe(true);
    expect(
      isRedisReady(
        {
          isOpen: true,
          _slots: {
            getClient: () => {
              throw new Error('no slot');
            },
          },
        },
        'k',
        false,
      ),
    ).toBe(false);
    expect(isRedisReady({}, 'k', false)).toBe(true);
  });
});
