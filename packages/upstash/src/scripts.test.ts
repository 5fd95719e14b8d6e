import { describeWithService, redisService } from '@ratekit/test-utils';
import { Redis as IORedis } from 'ioredis';
import { createHash } from 'node:crypto';
import { asArgument, SCRIPTS } from './scripts.js';

const all = Object.values(SCRIPTS);

describe('SCRIPTS', () => {
  it.each(all.map((s) => [s.name, s] as const))('%s: its sha is the SHA-1 of its text', (_, script) => {
    expect(script.sha).toBe(createHash('sha1').update(script.script).digest('hex'));
  });

  it.each(all.map((s) => [s.name, s] as const))('%s: plain ASCII, no shebang (no allow-key-locking flag)', (_, script) => {
    expect([...script.script].every((char) => char === '\t' || char === '\n' || (char >= ' ' && char <= '~'))).toBe(true);
    expect(script.script.trimStart().startsWith('#!')).toBe(false);
    expect(script.script).not.toContain('allow-key-locking');
  });
});

describeWithService(redisService, 'SCRIPTS on open-source Redis', (server) => {
  let redis: IORedis;
  beforeAll(() => {
    redis = new IORedis(server().url);
  });
  afterAll(async () => {
    await redis.quit();
  });

  it('every script loads, under the sha it declares', async () => {
    for (const script of all) expect(await redis.script('LOAD', script.script)).toBe(script.sha);
  });

  it("the incumbent's scripts are what Redis 7.0 refuses: their allow-key-locking flag", async () => {
    const version = /redis_version:(\d+)\.(\d+)/.exec(await redis.info('server'));
    const flagged = '#!lua flags=allow-key-locking\nreturn 1';
    if (version !== null && Number(version[1]) === 7 && Number(version[2]) === 0) {
      await expect(redis.eval(flagged, 0)).rejects.toThrow(/flag/i);
    }
    // Ours, the same kind of script without the line, runs.
    expect(await redis.eval('return 1', 0)).toBe(1);
  });

  describe('asArgument: the text Redis stores for a number', () => {
    // Each value is written twice, as Redis formats a Lua number itself (%.17g) and through asArgument; the two
    // stored texts must be the same bytes. -0, fractions, 10^15 and beyond, and infinities take the number path.
    const values = ['0', '0 * -1', '1', '-1', '5', '999999999999999', '-999999999999999', '1e15', '-1e15', '2^53', '1.5', '0.1', '-2.25', '1 / 3', '1764438000000', '1e300', '1 / 0', '-1 / 0'];

    it.each(values)('%s', async (value) => {
      const script = `local x = ${value}
redis.call('HSET', KEYS[1], 'redis', x, 'ours', ${asArgument('x')})
return redis.call('HMGET', KEYS[1], 'redis', 'ours')`;
      const key = `ratekit:test:as-argument:${value}`;
      const [byRedis, byUs] = (await redis.eval(script, 1, key)) as [string, string];
      await redis.del(key);
      expect(byUs).toBe(byRedis);
    });
  });
});
