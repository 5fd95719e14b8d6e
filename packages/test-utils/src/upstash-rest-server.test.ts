// The local Upstash REST endpoint on a real Redis (7.0 here, which refuses the shebang flag
// `allow-key-locking`), through the real @upstash/redis client: the flag's rule of the module's header.
import { createHash, randomUUID } from 'node:crypto';
import { Redis } from '@upstash/redis';
import { createClient } from 'redis';
import { redisService } from './redis-server.js';
import { describeWithService } from './services.js';
import { startUpstashRestServer, type UpstashRestServer, withoutKeyLocking } from './upstash-rest-server.js';

const sha1 = (text: string) => createHash('sha1').update(text, 'utf8').digest('hex');
const PREFIX = `ratekit-test-utils-rest:${randomUUID()}:`;
const connect = (url: string) => createClient({ url }).connect();
type NodeRedis = Awaited<ReturnType<typeof connect>>;

/** A script of @upstash/ratelimit 2.2's form (its shebang, a key, an argument), unique to this run so it was never loaded before. */
function flaggedScript(shebang = '#!lua flags=allow-key-locking'): string {
  return `${shebang}\n  -- ${randomUUID()}\n  local value = redis.call("INCRBY", KEYS[1], ARGV[1])\n  return {value, "counted"}\n`;
}

describe('withoutKeyLocking', () => {
  it.each([
    ['#!lua flags=allow-key-locking\nreturn 1', '#!lua\nreturn 1'],
    ['#!lua flags=no-writes,allow-key-locking\nreturn 1', '#!lua flags=no-writes\nreturn 1'],
    ['#!lua flags=allow-key-locking,no-writes\nreturn 1', '#!lua flags=no-writes\nreturn 1'],
    ['#!lua flags=allow-key-locking', '#!lua'],
  ])('takes the flag out of %j', (script, expected) => {
    expect(withoutKeyLocking(script)).toBe(expected);
  });

  it.each([
    ['no shebang', 'return 1'],
    ['a shebang without the flag', '#!lua flags=no-writes\nreturn 1'],
    ['the flag on a later line', 'return 1\n#!lua flags=allow-key-locking'],
    ['another interpreter', '#!luax flags=allow-key-locking\nreturn 1'],
  ])('leaves a script with %s alone', (_, script) => {
    expect(withoutKeyLocking(script)).toBeUndefined();
  });
});

describeWithService(redisService, 'startUpstashRestServer and `allow-key-locking` scripts, on a real Redis', (server) => {
  let admin: NodeRedis;
  let rest: UpstashRestServer;
  let upstash: Redis;

  beforeAll(async () => {
    admin = await connect(server().url);
    rest = await startUpstashRestServer({ sendCommand: (args) => admin.sendCommand(args), multi: (commands) => runMulti(admin, commands) });
    upstash = new Redis({ url: rest.url, token: rest.token, retry: false, enableTelemetry: false });
  });
  afterAll(async () => {
    const keys = await admin.keys(`${PREFIX}*`);
    if (keys.length > 0) await admin.del(keys);
    await rest.close();
    await admin.quit();
  });

  it('is a script Redis itself refuses', async () => {
    await expect(admin.sendCommand(['EVAL', flaggedScript(), '1', `${PREFIX}direct`, '1'])).rejects.toThrow(/Unexpected flag in script shebang/);
  });

  it('runs it with EVAL, then with EVALSHA of the SHA-1 of the text the client sent', async () => {
    const script = flaggedScript();
    const key = `${PREFIX}eval`;
    await expect(upstash.eval(script, [key], [2])).resolves.toEqual([2, 'counted']);
    await expect(upstash.evalsha(sha1(script), [key], [3])).resolves.toEqual([5, 'counted']);
    await expect(admin.get(key)).resolves.toBe('5');
  });

  it('answers SCRIPT LOAD with the SHA-1 of the text the client sent, which EVALSHA then runs', async () => {
    const script = flaggedScript();
    const key = `${PREFIX}load`;
    await expect(upstash.scriptLoad(script)).resolves.toBe(sha1(script));
    await expect(upstash.scriptExists(sha1(script))).resolves.toEqual([1]);
    await expect(upstash.evalsha(sha1(script), [key], [4])).resolves.toEqual([4, 'counted']);
    // Redis holds the script without the flag, under that text's SHA-1.
    const stripped = withoutKeyLocking(script) ?? '';
    expect(stripped.startsWith('#!lua\n')).toBe(true);
    await expect(admin.sendCommand(['SCRIPT', 'EXISTS', sha1(stripped)])).resolves.toEqual([1]);
  });

  it('answers NOSCRIPT for EVALSHA of a script never loaded, and SCRIPT EXISTS says 0', async () => {
    const script = flaggedScript();
    await expect(upstash.scriptExists(sha1(script))).resolves.toEqual([0]);
    await expect(upstash.evalsha(sha1(script), [`${PREFIX}never`], [1])).rejects.toThrow(/NOSCRIPT/);
    await expect(admin.exists(`${PREFIX}never`)).resolves.toBe(0);
  });

  it('keeps the other flags: no-writes still refuses a write', async () => {
    const script = flaggedScript('#!lua flags=no-writes,allow-key-locking');
    await expect(upstash.eval(script, [`${PREFIX}read-only`], [1])).rejects.toThrow(/Write commands are not allowed from read-only scripts/);
  });

  it('leaves an unknown flag of another name to Redis', async () => {
    await expect(upstash.eval(flaggedScript('#!lua flags=allow-key-locking,no-such-flag'), [`${PREFIX}unknown`], [1])).rejects.toThrow(/Unexpected flag in script shebang: no-such-flag/);
  });

  it('translates scripts in a pipeline and in a transaction too', async () => {
    const script = flaggedScript();
    const key = `${PREFIX}pipeline`;
    const pipeline = upstash.pipeline();
    pipeline.scriptLoad(script);
    pipeline.evalsha(sha1(script), [key], [1]);
    await expect(pipeline.exec()).resolves.toEqual([sha1(script), [1, 'counted']]);
    const transaction = upstash.multi();
    transaction.eval(script, [key], [10]);
    transaction.evalsha(sha1(script), [key], [100]);
    await expect(transaction.exec()).resolves.toEqual([
      [11, 'counted'],
      [111, 'counted'],
    ]);
  });

  it("keeps each endpoint's SHA-1s its own, like two servers' script caches", async () => {
    const other = await startUpstashRestServer({ sendCommand: (args) => admin.sendCommand(args) });
    try {
      const script = flaggedScript();
      await upstash.scriptLoad(script);
      const elsewhere = new Redis({ url: other.url, token: other.token, retry: false, enableTelemetry: false });
      await expect(elsewhere.evalsha(sha1(script), [`${PREFIX}elsewhere`], [1])).rejects.toThrow(/NOSCRIPT/);
      await expect(elsewhere.eval(script, [`${PREFIX}elsewhere`], [1])).resolves.toEqual([1, 'counted']);
      await expect(elsewhere.evalsha(sha1(script), [`${PREFIX}elsewhere`], [1])).resolves.toEqual([2, 'counted']);
    } finally {
      await other.close();
    }
  });

  it('forwards a script without the flag unchanged', async () => {
    const script = `return {KEYS[1], "${randomUUID()}"}`;
    await expect(upstash.scriptLoad(script)).resolves.toBe(sha1(script));
    await expect(upstash.evalsha(sha1(script), [`${PREFIX}plain`], [])).resolves.toEqual([`${PREFIX}plain`, expect.any(String)]);
  });
});

/** MULTI/EXEC on node-redis, each reply or its error. */
async function runMulti(client: NodeRedis, commands: string[][]): Promise<unknown[]> {
  const multi = client.multi();
  for (const command of commands) multi.addCommand(command);
  return multi.exec();
}
