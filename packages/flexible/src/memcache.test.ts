import { RateKitOptionError } from '@ratekit/core';
import { describeWithService, memcachedService } from '@ratekit/test-utils';
import Memcached from 'memcached';
import MemcachedMock from 'memcached-mock';
import { randomUUID } from 'node:crypto';
import { ADD_RETRIES, type MemcachedCallbackClient, RateLimiterMemcache } from './memcache.js';
import { RateLimiterRes } from './rate-limiter-res.js';

/** A client's value for `key`, as a promise. */
function read(client: MemcachedCallbackClient, key: string): Promise<unknown> {
  return new Promise((resolve, reject) => client.get(key, (error, value) => (error ? reject(new Error('get failed', { cause: error })) : resolve(value))));
}

function write(client: MemcachedCallbackClient, key: string, value: unknown, lifetime: number): Promise<void> {
  return new Promise((resolve, reject) => client.set(key, value, lifetime, (error) => (error ? reject(new Error('set failed', { cause: error })) : resolve())));
}

/** Runs `body` and returns the RateLimiterRes it rejects with (failing if it resolves or rejects otherwise). */
async function refusal(body: Promise<unknown>): Promise<RateLimiterRes> {
  const outcome = await body.then(
    (value) => ({ resolved: value }),
    (reason: unknown) => ({ rejected: reason }),
  );
  if (!('rejected' in outcome)) throw new Error('expected a refusal, got a resolution');
  expect(outcome.rejected).toBeInstanceOf(RateLimiterRes);
  return outcome.rejected as RateLimiterRes;
}

/**
 * A client that answers each method from a script (for the paths a real server
 * only takes in a race or a failure), recording the calls.
 */
function scripted(answers: Partial<Record<keyof MemcachedCallbackClient, (key: string) => [unknown, unknown]>>) {
  const calls: string[] = [];
  const method =
    (name: keyof MemcachedCallbackClient) =>
    (...args: unknown[]) => {
      const callback = args.pop() as (error: unknown, value: unknown) => void;
      const key = args[0] as string;
      calls.push(`${name} ${key}`);
      const answer = answers[name]?.(key) ?? [undefined, true];
      process.nextTick(() => callback(answer[0], answer[1]));
    };
  const client = {
    incr: method('incr'),
    decr: method('decr'),
    add: method('add'),
    set: method('set'),
    get: method('get'),
    del: method('del'),
  } as unknown as MemcachedCallbackClient;
  return { client, calls };
}

describe('RateLimiterMemcache (construction)', () => {
  it("requires storeClient, with rlf's message", () => {
    expect(() => new RateLimiterMemcache({ points: 1, duration: 1 } as never)).toThrow('storeClient is not set');
  });

  it('refuses a client without the memcached callback methods with a coded option error', () => {
    const build = () => new RateLimiterMemcache({ storeClient: { get() {} }, points: 1, duration: 1 });
    expect(build).toThrow(RateKitOptionError);
    expect(build).toThrow(/Expected `storeClient` to be a memcached client with incr, decr, add, set, get, del/);
  });
});

describe('RateLimiterMemcache on memcached-mock (the client of rlf’s own tests)', () => {
  const client = new MemcachedMock('localhost:11211') as unknown as MemcachedCallbackClient;
  const limiter = (options: Record<string, unknown> = {}) => new RateLimiterMemcache({ storeClient: client, points: 3, duration: 10, keyPrefix: `t${randomUUID().slice(0, 8)}`, ...options });

  it("writes rlf's two keys on the first consume: the count, and the window's end in epoch ms", async () => {
    const rl = limiter();
    const before = Date.now();
    const res = await rl.consume('k');
    const after = Date.now();
    expect(res.toJSON()).toEqual({ remainingPoints: 2, msBeforeNext: 10_000, consumedPoints: 1, isFirstInDuration: true });
    expect(await read(client, rl.getKey('k'))).toBe(1);
    const expire = (await read(client, `${rl.getKey('k')}_expire`)) as number;
    expect(expire).toBeGreaterThanOrEqual(before + 10_000);
    expect(expire).toBeLessThanOrEqual(after + 10_000);
  });

  it('counts on with incr, and reads msBeforeNext from the _expire key', async () => {
    const rl = limiter();
    await rl.consume('k');
    // The window's end, moved 4 s earlier: msBeforeNext follows the stored value.
    const end = Date.now() + 6_000;
    await write(client, `${rl.getKey('k')}_expire`, end, 10);
    const res = await rl.consume('k', 2);
    expect(res.consumedPoints).toBe(3);
    expect(res.remainingPoints).toBe(0);
    expect(res.isFirstInDuration).toBe(false);
    expect(res.msBeforeNext).toBeLessThanOrEqual(6_000);
    expect(res.msBeforeNext).toBeGreaterThan(6_000 - 1_000); // margin: the time this test takes, under a second
  });

  it('refuses with a RateLimiterRes once the count passes points (the refused points are counted)', async () => {
    const rl = limiter();
    await rl.consume('k', 3);
    const refused = await refusal(rl.consume('k'));
    expect(refused.consumedPoints).toBe(4);
    expect(refused.remainingPoints).toBe(0);
    expect(await read(client, rl.getKey('k'))).toBe(4);
  });

  it('answers msBeforeNext 0 when the _expire key is gone, as rlf does', async () => {
    const rl = limiter();
    await rl.consume('k');
    await new Promise((resolve) => client.del(`${rl.getKey('k')}_expire`, resolve));
    expect((await rl.consume('k')).msBeforeNext).toBe(0);
  });

  it('set and block write both keys; 0 seconds is forever (-1)', async () => {
    const rl = limiter();
    const set = await rl.set('k', 2, 5);
    expect(set.toJSON()).toEqual({ remainingPoints: 0, msBeforeNext: 5_000, consumedPoints: 2, isFirstInDuration: false });
    expect(await read(client, rl.getKey('k'))).toBe(2);
    const blocked = await rl.block('k', 0);
    expect(blocked.msBeforeNext).toBe(-1);
    expect(await read(client, rl.getKey('k'))).toBe(4); // points + 1
    expect(await read(client, `${rl.getKey('k')}_expire`)).toBe(-1);
    const got = await rl.get('k');
    expect(got?.consumedPoints).toBe(4);
    expect(got?.msBeforeNext).toBe(-1);
  });

  it('duration 0 never expires: the TTL is 0 and _expire is -1', async () => {
    const rl = limiter({ duration: 0 });
    expect((await rl.consume('k')).msBeforeNext).toBe(-1);
    expect(await read(client, `${rl.getKey('k')}_expire`)).toBe(-1);
    expect((await rl.consume('k')).msBeforeNext).toBe(-1);
  });

  it('get answers null for a missing key and, as rlf, for a count of 0', async () => {
    const rl = limiter();
    expect(await rl.get('k')).toBeNull();
    await rl.set('k', 0, 10);
    expect(await rl.get('k')).toBeNull();
    await rl.consume('k');
    expect((await rl.get('k'))?.consumedPoints).toBe(1);
  });

  it('delete removes both keys and answers true; false for a missing key', async () => {
    const rl = limiter();
    await rl.consume('k');
    expect(await rl.delete('k')).toBe(true);
    expect(await read(client, rl.getKey('k'))).toBeUndefined();
    expect(await read(client, `${rl.getKey('k')}_expire`)).toBeUndefined();
    expect(await rl.delete('k')).toBe(false);
  });

  it('reward uses decr: the count goes down', async () => {
    const rl = limiter();
    await rl.consume('k', 3);
    const res = await rl.reward('k', 2);
    expect(res.consumedPoints).toBe(1);
    expect(res.remainingPoints).toBe(2);
  });

  it('rejects points that are not whole numbers with an Error, writing nothing', async () => {
    const rl = limiter();
    await expect(rl.consume('k', 1.5)).rejects.toThrow('RateLimiterMemcache: memcached counts whole points, got 1.5');
    expect(await read(client, rl.getKey('k'))).toBeUndefined();
  });
});

describe('RateLimiterMemcache (races and failures, on a scripted client)', () => {
  it(`when add loses the race ${1 + ADD_RETRIES} times, rejects with rlf's Error('Can not add key'), the last failure as its cause`, async () => {
    const notStored = Object.assign(new Error('Item is not stored'), { notStored: true });
    const { client, calls } = scripted({ incr: () => [undefined, false], add: () => [notStored, false] });
    const rl = new RateLimiterMemcache({ storeClient: client, points: 3, duration: 10 });
    const error = await rl.consume('k').then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe('Can not add key');
    expect((error as Error).cause).toBe(notStored);
    expect(calls).toEqual(Array.from({ length: 1 + ADD_RETRIES }, () => ['incr rlflx:k', 'add rlflx:k']).flat());
  });

  it('when add loses the race once, counts again with incr: the other process’s window is joined', async () => {
    let incrs = 0;
    const { client, calls } = scripted({
      incr: () => (incrs++ === 0 ? [undefined, false] : [undefined, 2]),
      add: () => [undefined, false],
      get: () => [undefined, Date.now() + 5_000],
    });
    const rl = new RateLimiterMemcache({ storeClient: client, points: 3, duration: 10 });
    const res = await rl.consume('k');
    expect(res.consumedPoints).toBe(2);
    expect(res.isFirstInDuration).toBe(false);
    expect(calls).toEqual(['incr rlflx:k', 'add rlflx:k', 'incr rlflx:k', 'get rlflx:k_expire']);
  });

  it('a failed _expire write rejects the consume (rlf ignores it)', async () => {
    const down = new Error('connection lost');
    const { client } = scripted({ incr: () => [undefined, false], add: () => [undefined, true], set: () => [down, false] });
    const rl = new RateLimiterMemcache({ storeClient: client, points: 3, duration: 10 });
    await expect(rl.consume('k')).rejects.toBe(down);
  });

  it('a failed get rejects (rlf answers null), so get goes to insuranceLimiter or rejects', async () => {
    const down = new Error('connection lost');
    const { client } = scripted({ get: () => [down, undefined] });
    const rl = new RateLimiterMemcache({ storeClient: client, points: 3, duration: 10 });
    await expect(rl.get('k')).rejects.toBe(down);
  });

  it('a new window writes _expire with set (a stale _expire of the last window is replaced)', async () => {
    const { client, calls } = scripted({ incr: () => [undefined, false], add: () => [undefined, true] });
    const rl = new RateLimiterMemcache({ storeClient: client, points: 3, duration: 10 });
    expect((await rl.consume('k')).msBeforeNext).toBe(10_000);
    expect(calls).toEqual(['incr rlflx:k', 'add rlflx:k', 'set rlflx:k_expire']);
  });
});

describeWithService(memcachedService, 'RateLimiterMemcache on a real memcached', (server) => {
  let client: Memcached;
  beforeAll(() => {
    client = new Memcached(server().url, { retries: 0, timeout: 2_000 });
  });
  afterAll(() => {
    client.end();
  });
  const limiter = (options: Record<string, unknown> = {}) => new RateLimiterMemcache({ storeClient: client, points: 5, duration: 60, keyPrefix: `t${randomUUID().slice(0, 8)}`, ...options });
  const mc = () => client as unknown as MemcachedCallbackClient;

  it('reward lowers the count with decr, and stops at 0 (memcached refuses the negative incr rlf sends)', async () => {
    const rl = limiter();
    await rl.consume('k', 3);
    expect((await rl.reward('k', 2)).consumedPoints).toBe(1);
    expect(await read(mc(), rl.getKey('k'))).toBe(1);
    const res = await rl.reward('k', 5);
    expect(res.consumedPoints).toBe(0);
    expect(res.remainingPoints).toBe(5);
    expect((await rl.consume('k')).consumedPoints).toBe(1);
  });

  it('a decr that shortens the number (memcached pads it with a space) still reads as the number', async () => {
    const rl = limiter({ points: 20 });
    await rl.consume('k', 10);
    expect((await rl.reward('k', 1)).consumedPoints).toBe(9);
    expect((await rl.get('k'))?.consumedPoints).toBe(9);
    expect((await rl.consume('k')).consumedPoints).toBe(10);
  });

  it('a reward on a missing key starts the window at 0; the next consume counts 1 in it', async () => {
    const rl = limiter();
    const res = await rl.reward('k', 2);
    expect(res.toJSON()).toEqual({ remainingPoints: 5, msBeforeNext: 60_000, consumedPoints: 0, isFirstInDuration: false });
    const next = await rl.consume('k');
    expect(next.consumedPoints).toBe(1);
    expect(next.msBeforeNext).toBeLessThanOrEqual(60_000);
    expect(next.msBeforeNext).toBeGreaterThan(59_000); // margin: this test's own duration, under a second
    // rlf's formula (consumed === changed) calls it first in its window.
    expect(next.isFirstInDuration).toBe(true);
  });

  it('a duration over 30 days is kept (sent as the Unix time it ends at), so the limit still refuses', async () => {
    const rl = limiter({ points: 1, duration: 31 * 24 * 3600 });
    expect((await rl.consume('k')).consumedPoints).toBe(1);
    const refused = await refusal(rl.consume('k'));
    expect(refused.consumedPoints).toBe(2);
    expect(refused.msBeforeNext).toBeGreaterThan(31 * 24 * 3600 * 1000 - 60_000);
  });

  it('a stale _expire of an ended window is replaced when the next window starts', async () => {
    const rl = limiter();
    // The previous window's _expire, outliving its counter.
    await write(mc(), `${rl.getKey('k')}_expire`, Date.now() - 500, 5);
    const res = await rl.consume('k');
    expect(res.msBeforeNext).toBe(60_000);
    const next = await rl.consume('k');
    expect(next.msBeforeNext).toBeGreaterThan(59_000); // margin: this test's own duration, under a second
  });
});
