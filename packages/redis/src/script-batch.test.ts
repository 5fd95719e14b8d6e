import { describeWithService, freshNamespace, parseClusterNodes, redisClusterService, redisService } from '@ratekit/test-utils';
import calculateSlot from 'cluster-key-slot';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { Cluster, Redis } from 'ioredis';
import { createClient, createCluster } from 'redis';
import { batchScript, scriptBatcher } from './script-batch.js';
import { type RedisScriptTransport, redisScriptTransport } from './transport.js';

/**
 * scriptBatcher: a package's own scripts, coalesced per iteration into one
 * call of a batch script, with every reply as the script alone gives it.
 */

/** Three scripts of the kinds a limiter sends: a counter with an expiry, a read that may be nil, and one that fails on demand. */
const INCR = `local n = redis.call('INCRBY', KEYS[1], ARGV[1])
if n == tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return {n, redis.call('PTTL', KEYS[1])}`;
const GET = `return redis.call('GET', KEYS[1])`;
const FAIL = `if ARGV[1] == 'call' then return redis.call('HGET', KEYS[1], 'x') end
return redis.error_reply('refused: ' .. KEYS[1])`;
const SCRIPTS = [INCR, GET, FAIL];

const CLIENTS = {
  ioredis: async (url: string) => {
    const client = new Redis(url);
    await new Promise<void>((resolve, reject) => client.once('ready', resolve).once('error', reject));
    return { client, close: () => client.quit().then(() => undefined) };
  },
  'node-redis': async (url: string) => {
    const client = await createClient({ url }).connect();
    return { client, close: () => client.quit().then(() => undefined) };
  },
} as const;

/** `transport`, recording the arguments (ARGV) of every call it sends. */
function recording(transport: RedisScriptTransport): { transport: RedisScriptTransport; sent: string[][] } {
  const sent: string[][] = [];
  return { sent, transport: { ...transport, run: (script, sha, keys, args) => (sent.push(args), transport.run(script, sha, keys, args)) } };
}

/** `client`, recording the key count of every EVALSHA/EVAL it sends. */
function counted<T extends object>(client: T): { client: T; calls: number[] } {
  const calls: number[] = [];
  const proxy = new Proxy(client, {
    get(target, name) {
      const value = Reflect.get(target, name, target) as unknown;
      if (typeof value !== 'function') return value;
      if (name === 'evalsha' || name === 'eval') return (s: string, n: number, ...rest: unknown[]) => (calls.push(n), (value as (...a: unknown[]) => unknown).call(target, s, n, ...rest));
      if (name === 'evalSha') return (s: string, o: { keys: string[] }) => (calls.push(o.keys.length), (value as (...a: unknown[]) => unknown).call(target, s, o));
      return (value as (...a: unknown[]) => unknown).bind(target);
    },
  });
  return { client: proxy, calls };
}

describe('batchScript', () => {
  it('refuses a script with a shebang line: its flags would apply to the whole batch', () => {
    expect(() => batchScript(['#!lua flags=no-writes\nreturn 1'])).toThrow(/shebang/);
  });
});

describeWithService(redisService, 'scriptBatcher, on a real Redis', (server) => {
  for (const [clientName, connect] of Object.entries(CLIENTS)) {
    describe(`with ${clientName}`, () => {
      let connection: Awaited<ReturnType<(typeof CLIENTS)['ioredis']>>;
      beforeAll(async () => {
        connection = (await connect(server().url)) as typeof connection;
      });
      afterAll(() => connection.close());

      it('the calls asked after the first of an iteration go as one call, each answered as alone and in the order asked', async () => {
        const { client, calls } = counted(connection.client);
        const batcher = scriptBatcher(redisScriptTransport(client)!, SCRIPTS, { batchesInFlight: 0 });
        const key = `${freshNamespace()}:hits`;
        // The steady state: the server has the batch script (the first call ever is EVALSHA, NOSCRIPT, then EVAL).
        await batcher.run(GET, [key], []);
        calls.length = 0;
        const replies = await Promise.all([1, 2, 3, 4].map(() => batcher.run(INCR, [key], ['1', '60000'])));
        expect(replies.map((r) => (r as number[])[0])).toEqual([1, 2, 3, 4]);
        for (const reply of replies) expect((reply as number[])[1]).toBeGreaterThan(59_000);
        // The first alone (a batch of one), the other three together.
        expect(calls).toEqual([1, 3]);
      });

      it('a nil reply is null; a failing call rejects alone with its error, its neighbours in the batch unharmed', async () => {
        const batcher = scriptBatcher(redisScriptTransport(connection.client)!, SCRIPTS, { batchesInFlight: 0 });
        const ns = freshNamespace();
        await connection.client.set(`${ns}:string`, 'x');
        const results = await Promise.allSettled([
          batcher.run(GET, [`${ns}:absent`], []),
          batcher.run(FAIL, [`${ns}:a`], ['reply']),
          batcher.run(INCR, [`${ns}:n`], ['5', '1000']),
          batcher.run(FAIL, [`${ns}:string`], ['call']),
          batcher.run(GET, [`${ns}:n`], []),
        ]);
        expect(results[0]).toEqual({ status: 'fulfilled', value: null });
        expect(results[1]).toMatchObject({ status: 'rejected', reason: { message: `refused: ${ns}:a` } });
        expect(results[2]).toMatchObject({ status: 'fulfilled', value: [5, expect.any(Number)] });
        expect(results[3]).toMatchObject({ status: 'rejected', reason: { message: expect.stringMatching(/WRONGTYPE/) } });
        expect(results[4]).toEqual({ status: 'fulfilled', value: '5' });
      });

      it('after SCRIPT FLUSH (a restart, a failover) the batch is sent again with EVAL, in order, and decides alike', async () => {
        const batcher = scriptBatcher(redisScriptTransport(connection.client)!, SCRIPTS);
        const key = `${freshNamespace()}:hits`;
        await batcher.run(INCR, [key], ['1', '60000']);
        const admin = await createClient({ url: server().url }).connect();
        await admin.scriptFlush();
        await admin.quit();
        const replies = await Promise.all([1, 2, 3].map(() => batcher.run(INCR, [key], ['1', '60000'])));
        expect(replies.map((r) => (r as number[])[0])).toEqual([2, 3, 4]);
      });

      it('every shape of reply arrives as the script sent alone (plain EVALSHA) gives it, in a batch of many', async () => {
        // The batch reply is flat (see batchScript): arrays nested, holding false, cut at a nil, empty; status
        // replies, errors, floats, strings and nils must all come back as they do without the batcher.
        const shapes = [
          "return {1, {2, {'x'}}, 'y'}",
          'return {1, false, 3}',
          'return {1, nil, 3}',
          'return {}',
          'return {{}, {{}}, {false}}',
          "return redis.call('SET', KEYS[1], 'v')",
          "return {ok = 'FINE'}",
          "return {1, {ok = 'NESTED'}, {err = 'nested error'}}",
          'return 3.7',
          "return 'text'",
          'return false',
          'return nil',
          "return redis.error_reply('E1')",
          "return {err = 'E2'}",
          "error('E3')",
        ];
        const transport = redisScriptTransport(connection.client)!;
        const batcher = scriptBatcher(transport, shapes, { batchesInFlight: 0 });
        const key = `${freshNamespace()}:shape`;
        type Settled = { value: string } | { error: string };
        const settle = (p: Promise<unknown>): Promise<Settled> =>
          p.then(
            (value) => ({ value: JSON.stringify(value, (_, v: unknown) => (v instanceof Error ? { error: v.message } : v)) }),
            (error: Error) => ({ error: error.message }),
          );
        const alone: Settled[] = [];
        for (const shape of shapes) alone.push(await settle(transport.run(shape, createHash('sha1').update(shape).digest('hex'), [key], [])));
        await batcher.run(shapes[0]!, [key], []); // the steady state: the batch script loaded
        const together = await Promise.all([...shapes, ...shapes].map((shape) => settle(batcher.run(shape, [key], []))));
        expect(together.slice(0, shapes.length).map((r) => ('value' in r ? r : 'error'))).toEqual(alone.map((r) => ('value' in r ? r : 'error')));
        expect(together.slice(shapes.length)).toEqual(together.slice(0, shapes.length));
        // Errors: the reply's own (`redis.error_reply`, `{err = …}`) as alone; a Lua runtime error keeps its text, but
        // its position is the batch script's, not the script's own.
        const errors = (rs: Settled[]) => rs.flatMap((r) => ('error' in r ? [r.error] : []));
        expect(errors(together.slice(0, shapes.length)).slice(0, 2)).toEqual(errors(alone).slice(0, 2));
        expect(errors(together.slice(0, shapes.length))[2]).toMatch(/user_script:\d+: E3/);
        expect(errors(alone)[2]).toMatch(/user_script:\d+: E3/);
      });

      it('arguments equal in every call of a batch go once; each call still sees exactly its own, even after one changes its ARGV', async () => {
        const echo = "local seen = table.concat(ARGV, ',') .. '|' .. #ARGV\nARGV[1] = 'changed'\nARGV[#ARGV + 1] = 'extra'\nreturn seen";
        const { client, calls } = counted(connection.client);
        const { transport, sent } = recording(redisScriptTransport(client)!);
        const batcher = scriptBatcher(transport, [echo], { batchesInFlight: 0 });
        const key = `${freshNamespace()}:echo`;
        await batcher.run(echo, [key], ['warm', 'up', '0']);
        sent.length = 0;
        calls.length = 0;
        const replies = await Promise.all([
          batcher.run(echo, [key], ['a', 'x', '1']),
          batcher.run(echo, [key], ['a', 'y', '1']),
          batcher.run(echo, [key], ['a', 'z', '1']),
          batcher.run(echo, [key], ['a', 'w', '1']),
        ]);
        expect(replies).toEqual(['a,x,1|3', 'a,y,1|3', 'a,z,1|3', 'a,w,1|3']);
        // The first call alone; the other three in one batch: positions 1 and 3 shared, sent once.
        expect(calls).toEqual([1, 3]);
        expect(sent[1]).toEqual(['=1 1 3 1 3', 'a', '1', 'y', 'z', 'w']);
      });

      it('a batch description longer than the 4096 bytes read at a time, with a number across that boundary, reads whole', async () => {
        // The batch script reads ARGV[1] 4096 bytes at a time. The first call goes alone; in the batch, 670 INCR calls
        // ("1 1 2 ") then 6 pairs of INCR and WIDE ("2 1 12 ") put WIDE's argument count "12" across bytes 4096 and 4097.
        const wide = "return {#ARGV, table.concat(ARGV, ','), #KEYS}";
        const transport = redisScriptTransport(connection.client)!;
        const { transport: recorded, sent } = recording(transport);
        const together = scriptBatcher(recorded, [INCR, wide], { maxBatchSize: 1_000, batchesInFlight: 0 });
        const alone = scriptBatcher(transport, [INCR, wide], { coalesce: false });
        const wideArgs = (i: number) => Array.from({ length: 12 }, (_, j) => `${i}.${j + 1}`);
        const calls = [...Array.from({ length: 671 }, () => 'incr'), ...Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? 'incr' : 'wide'))];
        const run = (batcher: typeof together, ns: string, i: number, kind: string) =>
          kind === 'incr' ? batcher.run(INCR, [`${ns}:hits`], ['1', '60000']).then((r) => (r as number[])[0]) : batcher.run(wide, [`${ns}:w`], wideArgs(i));
        const ns = freshNamespace();
        await together.run(INCR, [`${ns}:warm`], ['1', '60000']);
        sent.length = 0;
        const replies = await Promise.all(calls.map((kind, i) => run(together, ns, i, kind)));
        expect(sent).toHaveLength(2);
        expect(sent[1]![0]!.length).toBeGreaterThan(4096);
        expect(sent[1]![0]!.slice(4095, 4097)).toBe('12');
        const sequentialNs = freshNamespace();
        const sequential = [];
        for (const [i, kind] of calls.entries()) sequential.push(await run(alone, sequentialNs, i, kind));
        expect(replies).toEqual(sequential);
        expect(replies.at(-1)).toEqual([12, wideArgs(682).join(','), 1]);
      });

      it('shared arguments at positions past 9 are read whole', async () => {
        const wide = "return table.concat(ARGV, ',')";
        const { transport, sent } = recording(redisScriptTransport(connection.client)!);
        const batcher = scriptBatcher(transport, [wide], { batchesInFlight: 0 });
        const args = (i: number) => [...Array.from({ length: 9 }, (_, j) => `${i}.${j + 1}`), 'ten', 'eleven', 'twelve'];
        const key = `${freshNamespace()}:wide`;
        await batcher.run(wide, [key], args(0));
        sent.length = 0;
        expect(await Promise.all([1, 2, 3].map((i) => batcher.run(wide, [key], args(i))))).toEqual([1, 2, 3].map((i) => args(i).join(',')));
        expect(sent[1]![0]).toBe('=1 1 12 10 11 12');
      });

      it("tonumber, answered from the batch's memo, answers as Lua's own: again, with a base, for numbers, nil, spaces and text that is no number", async () => {
        // Each value as text: a nil would end the array reply.
        const convert = `local values = {tonumber(ARGV[1]), tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[2], 16), tonumber(ARGV[2]), tonumber(7), tonumber(ARGV[3]), tonumber(ARGV[1], 10), tonumber(ARGV[4]), tonumber(ARGV[5])}
for i = 1, 10 do values[i] = tostring(values[i]) end
return values`;
        const transport = redisScriptTransport(connection.client)!;
        const batcher = scriptBatcher(transport, [convert], { batchesInFlight: 0 });
        const key = `${freshNamespace()}:convert`;
        const args = (i: number) => [String(40 + i), 'ff', '0x10', ' 1e3 '];
        const alone = (await transport.run(convert, createHash('sha1').update(convert).digest('hex'), [key], args(1))) as string[];
        expect(alone).toEqual(['41', '41', 'nil', '255', 'nil', '7', '16', '41', '1000', 'nil']);
        await batcher.run(convert, [key], args(0));
        const together = await Promise.all([1, 1, 2].map((i) => batcher.run(convert, [key], args(i))));
        expect(together).toEqual([alone, alone, ['42', '42', ...alone.slice(2, 7), '42', '1000', 'nil']]);
      });

      it('calls without keys or arguments, alone and together', async () => {
        const seven = 'return 7';
        const batcher = scriptBatcher(redisScriptTransport(connection.client)!, [seven, GET], { batchesInFlight: 0 });
        expect(await Promise.all([batcher.run(seven, [], []), batcher.run(seven, [], []), batcher.run(seven, [], [])])).toEqual([7, 7, 7]);
      });

      it('coalesce: false sends each call alone', async () => {
        const { client, calls } = counted(connection.client);
        const batcher = scriptBatcher(redisScriptTransport(client)!, SCRIPTS, { coalesce: false });
        const key = `${freshNamespace()}:hits`;
        await batcher.run(GET, [key], []);
        calls.length = 0;
        await Promise.all([1, 2, 3].map(() => batcher.run(INCR, [key], ['1', '60000'])));
        expect(calls).toEqual([1, 1, 1]);
      });

      it('differential: any interleaving of the three scripts on a few keys answers exactly as the same calls sent one at a time', async () => {
        const transport = redisScriptTransport(connection.client)!;
        const coalesced = scriptBatcher(transport, SCRIPTS);
        const alone = scriptBatcher(transport, SCRIPTS, { coalesce: false });
        const call = fc.record({ script: fc.constantFrom(INCR, GET, FAIL), key: fc.constantFrom('a', 'b', 'c'), n: fc.integer({ min: -2, max: 3 }) });
        await fc.assert(
          fc.asyncProperty(fc.array(call, { minLength: 1, maxLength: 40 }), async (calls) => {
            const run = async (batcher: typeof coalesced, ns: string, together: boolean) => {
              const one = (c: (typeof calls)[number]) => {
                const args = c.script === INCR ? [String(c.n), '60000'] : c.script === FAIL ? ['reply'] : [];
                return batcher.run(c.script, [`${ns}:${c.key}`], args).then(
                  (value) => ({ value: c.script === INCR ? (value as number[])[0] : value }),
                  (error: Error) => ({ error: error.message.replace(ns, '') }),
                );
              };
              if (together) return Promise.all(calls.map(one));
              const out = [];
              for (const c of calls) out.push(await one(c));
              return out;
            };
            const together = await run(coalesced, freshNamespace(), true);
            const sequential = await run(alone, freshNamespace(), false);
            expect(together).toEqual(sequential);
          }),
          { numRuns: 40 },
        );
      });
    });
  }

  it('run() with a script the batcher was not built with throws a TypeError', async () => {
    const { client, close } = await CLIENTS.ioredis(server().url);
    try {
      const batcher = scriptBatcher(redisScriptTransport(client)!, SCRIPTS);
      expect(() => batcher.run('return 1', ['k'], [])).toThrow(TypeError);
    } finally {
      await close();
    }
  });
});

describeWithService(redisClusterService, 'scriptBatcher on a Redis Cluster', (server) => {
  const CLUSTER_CLIENTS = {
    'ioredis Cluster': async () => {
      const cluster = new Cluster(parseClusterNodes(server().url).map((node) => ({ host: node.host, port: node.port })));
      await new Promise<void>((resolve, reject) => cluster.once('ready', resolve).once('error', reject));
      return { client: cluster, close: () => cluster.quit().then(() => undefined) };
    },
    'node-redis createCluster': async () => {
      const cluster = createCluster({ rootNodes: parseClusterNodes(server().url).map((node) => ({ url: `redis://${node.host}:${node.port}` })) });
      cluster.on('error', () => {});
      await cluster.connect();
      return { client: cluster, close: () => cluster.close().then(() => undefined) };
    },
  } as const;

  for (const [clientName, connect] of Object.entries(CLUSTER_CLIENTS)) {
    it(`with ${clientName}: one batch per hash slot, each answered in order`, async () => {
      const { client, close } = await connect();
      try {
        const transport = redisScriptTransport(client)!;
        const sent: string[][] = [];
        const spy = { ...transport, run: (script: string, sha: string, keys: string[], args: string[]) => (sent.push(keys), transport.run(script, sha, keys, args)) };
        const batcher = scriptBatcher(spy, SCRIPTS, { batchesInFlight: 0 });
        const ns = freshNamespace();
        const keys = Array.from({ length: 12 }, (_, i) => `${ns}:k${i}`);
        const replies = await Promise.all([0, 1, 2].flatMap(() => keys.map((key) => batcher.run(INCR, [key], ['1', '60000']))));
        expect(replies.map((r) => (r as number[])[0])).toEqual([...keys.map(() => 1), ...keys.map(() => 2), ...keys.map(() => 3)]);
        for (const batch of sent) expect(new Set(batch.map((key) => calculateSlot(key))).size).toBe(1);
        expect(sent.length).toBeLessThanOrEqual(1 + new Set(keys.map((key) => calculateSlot(key))).size);
      } finally {
        await close();
      }
    });
  }
});
