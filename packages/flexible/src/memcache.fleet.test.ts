import { describeWithService, memcachedService } from '@ratekit/test-utils';
import Memcached from 'memcached';
import { randomUUID } from 'node:crypto';
import { RateLimiterMemcache as RlfMemcache, RateLimiterRes as RlfRes } from 'rate-limiter-flexible';
import { RateLimiterMemcache } from './memcache.js';
import { RateLimiterRes } from './rate-limiter-res.js';

/**
 * A mixed fleet on one real memcached: rate-limiter-flexible 11.4's
 * RateLimiterMemcache and ours, alternating calls on the same keys, must count
 * as one limiter does. Each scenario runs twice, rlf first and ours first
 * (both directions). msBeforeNext is checked within MARGIN_MS of the exact
 * value: the time the scenario's own calls take on a loaded machine.
 */
const MARGIN_MS = 1_500;

/** What both classes answer (rlf's and ours): the four fields. */
interface Res {
  remainingPoints: number;
  msBeforeNext: number;
  consumedPoints: number;
  isFirstInDuration: boolean;
}

/** The limiter API both share, as the scenarios use it. */
interface Limiter {
  consume(key: string, points?: number): Promise<Res>;
  penalty(key: string, points?: number): Promise<Res>;
  reward(key: string, points?: number): Promise<Res>;
  get(key: string): Promise<Res | null>;
  set(key: string, points: number, secDuration: number): Promise<Res>;
  block(key: string, secDuration: number): Promise<Res>;
  delete(key: string): Promise<boolean>;
}

/** The refusal a call rejects with, checked to be its own library's RateLimiterRes. */
async function refused(call: Promise<unknown>): Promise<Res> {
  const reason = await call.then(
    () => {
      throw new Error('expected a refusal');
    },
    (error: unknown) => error,
  );
  expect(reason instanceof RateLimiterRes || reason instanceof RlfRes).toBe(true);
  return reason as Res;
}

/** Checks the counts exactly and msBeforeNext in (expected - MARGIN_MS, expected], or -1 exactly. */
function expectRes(res: Res | null, consumedPoints: number, remainingPoints: number, isFirstInDuration: boolean, msBeforeNext: number): void {
  expect(res).not.toBeNull();
  expect({ consumedPoints: res!.consumedPoints, remainingPoints: res!.remainingPoints, isFirstInDuration: res!.isFirstInDuration }).toEqual({
    consumedPoints,
    remainingPoints,
    isFirstInDuration,
  });
  if (msBeforeNext === -1) expect(res!.msBeforeNext).toBe(-1);
  else {
    expect(res!.msBeforeNext).toBeLessThanOrEqual(msBeforeNext);
    expect(res!.msBeforeNext).toBeGreaterThan(msBeforeNext - MARGIN_MS);
  }
}

describeWithService(memcachedService, 'a mixed fleet on memcached: rate-limiter-flexible 11.4 and @ratekit/flexible', (server) => {
  let client: Memcached;
  beforeAll(() => {
    client = new Memcached(server().url, { retries: 0, timeout: 2_000 });
  });
  afterAll(() => {
    client.end();
  });

  /** The two limiters on one prefix, with the same options. */
  const pair = (options: Record<string, unknown> = {}) => {
    const common = { storeClient: client, points: 3, duration: 60, keyPrefix: `fleet${randomUUID().slice(0, 8)}`, ...options };
    return { rlf: new RlfMemcache(common) as unknown as Limiter, ours: new RateLimiterMemcache(common) as unknown as Limiter };
  };
  const directions = [
    ['rlf first', (p: ReturnType<typeof pair>) => [p.rlf, p.ours] as const],
    ['ours first', (p: ReturnType<typeof pair>) => [p.ours, p.rlf] as const],
  ] as const;

  describe.each(directions)('%s', (_title, order) => {
    it('consume, penalty and get count as one limiter; the refusal carries the shared count', async () => {
      const [a, b] = order(pair());
      expectRes(await a.consume('k'), 1, 2, true, 60_000);
      expectRes(await b.consume('k'), 2, 1, false, 60_000);
      expectRes(await a.penalty('k'), 3, 0, false, 60_000);
      expectRes(await b.get('k'), 3, 0, false, 60_000);
      expectRes(await refused(a.consume('k')), 4, 0, false, 60_000);
      expectRes(await refused(b.consume('k', 2)), 6, 0, false, 60_000);
      expectRes(await a.get('k'), 6, 0, false, 60_000);
    });

    it('block and set by one are obeyed by the other; delete by one is seen by the other', async () => {
      const [a, b] = order(pair());
      await b.consume('k');
      expectRes(await a.block('k', 30), 4, 0, false, 30_000);
      expectRes(await refused(b.consume('k')), 5, 0, false, 30_000);
      expectRes(await b.set('k', 1, 20), 1, 0, false, 20_000);
      expectRes(await a.consume('k'), 2, 1, false, 20_000);
      expectRes(await b.get('k'), 2, 1, false, 20_000);
      expect(await a.delete('k')).toBe(true);
      expect(await b.get('k')).toBeNull();
      expect(await b.delete('k')).toBe(false);
      expectRes(await b.consume('k'), 1, 2, true, 60_000);
    });

    it('blockDuration: the consume that crosses the limit blocks the key for both', async () => {
      const [a, b] = order(pair({ blockDuration: 30 }));
      await a.consume('k', 3);
      expectRes(await refused(b.consume('k')), 4, 0, false, 30_000);
      // The block rewrote both keys with a 30 s TTL: the other sees it.
      expectRes(await refused(a.consume('k')), 5, 0, false, 30_000);
      expectRes(await b.get('k'), 5, 0, false, 30_000);
    });

    it('duration 0 and block 0 never expire, for both (-1)', async () => {
      const [a, b] = order(pair({ duration: 0 }));
      expectRes(await a.consume('k'), 1, 2, true, -1);
      expectRes(await b.consume('k'), 2, 1, false, -1);
      expectRes(await b.block('j', 0), 4, 0, false, -1);
      expectRes(await refused(a.consume('j')), 5, 0, false, -1);
    });

    it('a window started by one ends for both at the time the first wrote', async () => {
      const [a, b] = order(pair({ duration: 20 }));
      const first = await a.consume('k');
      expectRes(first, 1, 2, true, 20_000);
      const second = await b.consume('k');
      expectRes(second, 2, 1, false, 20_000);
      // The other read the end the first wrote: no later than the first's, within the margin.
      expect(second.msBeforeNext).toBeLessThanOrEqual(first.msBeforeNext);
      expect(second.msBeforeNext).toBeGreaterThan(first.msBeforeNext - MARGIN_MS);
    });
  });

  it("our reward lowers the count rlf's processes read (rlf's own reward cannot: memcached refuses its negative incr)", async () => {
    const { rlf, ours } = pair();
    await rlf.consume('k', 3);
    expectRes(await ours.reward('k', 2), 1, 2, false, 60_000);
    expectRes(await rlf.consume('k'), 2, 1, false, 60_000);
    // rlf's reward on the same key: memcached answers `invalid numeric delta argument` to incr -1,
    // the add that follows finds the key, and after three more tries rlf rejects; the count is unchanged.
    await expect(rlf.reward('k')).rejects.toThrow('Can not add key');
    expectRes(await ours.get('k'), 2, 1, false, 60_000);
  });

  it("a duration over 30 days: rlf's keys are stored already expired (memcached reads the TTL as a 1970 date) and never refuse; ours keep the count", async () => {
    const longMonth = { points: 1, duration: 31 * 24 * 3600 };
    const { rlf, ours } = pair(longMonth);
    expectRes(await rlf.consume('k'), 1, 0, true, 31 * 24 * 3600 * 1000);
    expectRes(await rlf.consume('k'), 1, 0, true, 31 * 24 * 3600 * 1000);
    expectRes(await ours.consume('k'), 1, 0, true, 31 * 24 * 3600 * 1000);
    expectRes(await refused(ours.consume('k')), 2, 0, false, 31 * 24 * 3600 * 1000);
    // rlf's processes share the count ours keeps: its incr finds the key.
    expectRes(await refused(rlf.consume('k')), 3, 0, false, 31 * 24 * 3600 * 1000);
  });
});
