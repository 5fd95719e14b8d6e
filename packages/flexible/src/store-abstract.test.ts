import type { IRateLimiterStoreOptions } from './options.js';
import { RateLimiterRes } from './rate-limiter-res.js';
import { RateLimiterStoreAbstract, execEvenlyDelayMs } from './store-abstract.js';

/** A store written the way rlf documents: only the four hooks, on a Map, reading Date.now (jest's fake clock here). */
class MapStore extends RateLimiterStoreAbstract {
  readonly rows = new Map<string, { points: number; expiresAt: number | null }>();
  readonly upserts: Array<[string, number, number, boolean]> = [];
  failing = false;

  constructor(opts: Omit<IRateLimiterStoreOptions, 'storeClient'>) {
    super({ storeClient: {}, ...opts });
  }

  override _upsert(rlKey: string, points: number, msDuration: number, forceExpire = false): Promise<unknown> {
    this.upserts.push([rlKey, points, msDuration, forceExpire]);
    if (this.failing) return Promise.reject(new Error('store down'));
    const now = Date.now();
    const row = this.rows.get(rlKey);
    if (forceExpire || row === undefined || (row.expiresAt !== null && row.expiresAt <= now)) {
      this.rows.set(rlKey, { points, expiresAt: msDuration > 0 ? now + msDuration : null });
    } else {
      row.points += points;
    }
    return Promise.resolve(this.rows.get(rlKey));
  }

  override _get(rlKey: string): Promise<unknown> {
    if (this.failing) return Promise.reject(new Error('store down'));
    return Promise.resolve(this.rows.get(rlKey) ?? null);
  }

  override _delete(rlKey: string): Promise<boolean> {
    if (this.failing) return Promise.reject(new Error('store down'));
    return Promise.resolve(this.rows.delete(rlKey));
  }

  override _getRateLimiterRes(_rlKey: string, changedPoints: number, result: unknown): RateLimiterRes {
    const row = result as { points: number; expiresAt: number | null };
    return new RateLimiterRes(0, row.expiresAt === null ? -1 : row.expiresAt - Date.now(), row.points, row.points === changedPoints);
  }
}

/** Settles a consume: 'ok n' or 'refused n' (n consumed points) with msBeforeNext. */
async function outcome(call: Promise<RateLimiterRes>): Promise<string> {
  try {
    const res = await call;
    return `ok ${res.consumedPoints} ${res.msBeforeNext}`;
  } catch (rejection) {
    if (rejection instanceof RateLimiterRes) return `refused ${rejection.consumedPoints} ${rejection.msBeforeNext}`;
    return `error ${(rejection as Error).message}`;
  }
}

beforeEach(() => jest.useFakeTimers({ now: 0 }));
afterEach(() => jest.useRealTimers());

describe('RateLimiterStoreAbstract: what a store gets by implementing the four hooks', () => {
  it('counts consumes per window and refuses past points (refusals count, remainingPoints set by the abstract)', async () => {
    const store = new MapStore({ points: 2, duration: 1, keyPrefix: 't' });
    expect(await outcome(store.consume('k'))).toBe('ok 1 1000');
    const second = await store.consume('k');
    expect(second.remainingPoints).toBe(0);
    expect(second.isFirstInDuration).toBe(false);
    expect(await outcome(store.consume('k'))).toBe('refused 3 1000');
    jest.setSystemTime(1000);
    expect(await outcome(store.consume('k'))).toBe('ok 1 1000');
  });

  it('blockDuration: only the consume that first crosses points rewrites the key (an upsert with forceExpire)', async () => {
    const store = new MapStore({ points: 1, duration: 1, blockDuration: 10 });
    // consume → outcome
    const timeline = ['ok 1 1000', 'refused 2 10000', 'refused 3 10000'];
    for (const expected of timeline) expect(await outcome(store.consume('k'))).toBe(expected);
    expect(store.upserts.filter(([, , , force]) => force)).toEqual([['rlflx:k', 2, 10_000, true]]);
  });

  it('blockOnConsumed (rlf 11.4): the key is blocked when consumed reaches it, not before', async () => {
    const store = new MapStore({ points: 1, duration: 1, blockDuration: 10, blockOnConsumed: 3 });
    const timeline = ['ok 1 1000', 'refused 2 1000', 'refused 3 10000'];
    for (const expected of timeline) expect(await outcome(store.consume('k'))).toBe(expected);
    expect((await store.block('b', 5)).consumedPoints).toBe(3);
  });

  it('inMemoryBlockOnConsumed without a duration: from the threshold on, refused in-process until the window ends; the call reaching it is decided by the count', async () => {
    const store = new MapStore({ points: 2, duration: 1, inMemoryBlockOnConsumed: 2 });
    const timeline = ['ok 1 1000', 'ok 2 1000', 'refused 0 1000', 'refused 0 1000'];
    for (const expected of timeline) expect(await outcome(store.consume('k'))).toBe(expected);
    expect(store.upserts).toHaveLength(2); // the in-process refusals never reached the store
    expect((await store.get('k'))?.consumedPoints).toBe(2); // get does not consult the in-process list (rlf, #265)
  });

  it('inMemoryBlockOnConsumed with inMemoryBlockDuration: blocks on the over-limit consume for that many seconds', async () => {
    const store = new MapStore({ points: 1, duration: 1, inMemoryBlockOnConsumed: 2, inMemoryBlockDuration: 30 });
    expect(await outcome(store.consume('k'))).toBe('ok 1 1000');
    expect(await outcome(store.consume('k'))).toBe('refused 2 30000');
    jest.setSystemTime(5000);
    expect(await outcome(store.consume('k'))).toBe('refused 0 25000');
    await store.delete('k'); // delete clears the in-process block too
    expect(await outcome(store.consume('k'))).toBe('ok 1 1000');
  });

  it('deleteInMemoryBlockedAll forgets every in-process block (the stored counts stay)', async () => {
    const store = new MapStore({ points: 1, duration: 10, inMemoryBlockOnConsumed: 1 });
    await store.consume('a');
    store.deleteInMemoryBlockedAll();
    expect(await outcome(store.consume('a'))).toBe('refused 2 10000');
  });

  it.each([
    [{ points: 5, duration: 1, inMemoryBlockOnConsumed: 4 }, 'inMemoryBlockOnConsumed option must be greater or equal "points" option'],
    [{ points: 5, duration: 1, inMemoryBlockDuration: 4 }, 'inMemoryBlockOnConsumed option must be set up'],
    [{ points: 5, duration: 1, blockOnConsumed: 4 }, 'blockOnConsumed option must be greater or equal "points" option'],
  ])('refuses %j: %s', (opts, message) => {
    expect(() => new MapStore(opts)).toThrow(new Error(message));
  });

  it("refuses storeClient undefined with rlf's message", () => {
    const store = new MapStore({ points: 1, duration: 1 });
    expect(() => (store.client = undefined)).toThrow('storeClient is not set');
  });

  it('penalty and reward change the count without checking the limit', async () => {
    const store = new MapStore({ points: 1, duration: 1 });
    expect((await store.penalty('k', 5)).consumedPoints).toBe(5);
    const rewarded = await store.reward('k', 2);
    expect([rewarded.consumedPoints, rewarded.remainingPoints]).toEqual([3, 0]);
  });

  it('set and block force the value and expiry; 0 seconds means forever (msBeforeNext -1)', async () => {
    const store = new MapStore({ points: 3, duration: 60 });
    expect((await store.set('k', 2, 0)).toJSON()).toEqual({ remainingPoints: 0, msBeforeNext: -1, consumedPoints: 2, isFirstInDuration: false });
    expect((await store.set('k', 2, -1)).msBeforeNext).toBe(60_000); // negative: duration
    expect((await store.block('k', 5)).toJSON()).toEqual({ remainingPoints: 0, msBeforeNext: 5000, consumedPoints: 4, isFirstInDuration: false });
  });

  it('execEvenly delays a non-first consume by rlf’s formula and reports msBeforeNext net of the wait', async () => {
    const store = new MapStore({ points: 4, duration: 1, execEvenly: true });
    await store.consume('k'); // first in window: no delay
    let settled: RateLimiterRes | undefined;
    void store.consume('k').then((res) => (settled = res));
    // remaining 2, msBeforeNext 1000: ceil(1000 / 4) = 250 ≥ minDelay 250
    await jest.advanceTimersByTimeAsync(249);
    expect(settled).toBeUndefined();
    await jest.advanceTimersByTimeAsync(1);
    expect(settled?.msBeforeNext).toBe(750);
  });

  it('a store failure rejects with the Error, or is answered by the insurance limiter', async () => {
    const store = new MapStore({ points: 1, duration: 1 });
    store.failing = true;
    expect(await outcome(store.consume('k'))).toBe('error store down');
    const insured = new MapStore({ points: 1, duration: 1, insuranceLimiter: new MapStore({ points: 9, duration: 1 }) });
    insured.failing = true;
    expect(await outcome(insured.consume('k'))).toBe('ok 1 1000');
    expect(await insured.get('k')).not.toBeNull();
    expect(await insured.delete('k')).toBe(true);
  });

  it('a failed block-by-blockDuration rejects the consume with that Error (rlf)', async () => {
    const store = new MapStore({ points: 1, duration: 1, blockDuration: 5 });
    await store.consume('k');
    const upsert = store._upsert.bind(store);
    store._upsert = (rlKey, points, ms, force) => (force ? Promise.reject(new Error('block failed')) : upsert(rlKey, points, ms, force));
    expect(await outcome(store.consume('k'))).toBe('error block failed');
  });

  it('a store reply the hooks cannot read rejects the consume with that Error, never leaving it pending', async () => {
    const store = new MapStore({ points: 1, duration: 1 });
    store._getRateLimiterRes = () => {
      throw new Error('unreadable reply');
    };
    expect(await outcome(store.consume('k'))).toBe('error unreadable reply');
  });
});

describe('execEvenlyDelayMs', () => {
  it.each([
    // msBeforeNext, remaining, consumed, minDelay → delay
    [1000, 2, 2, 250, 250],
    [1000, 8, 2, 250, 500], // ceil(1000/10) = 100 < 250: consumed × minDelay
    [999, 0, 4, 0, 500],
  ])('msBeforeNext %d, remaining %d, consumed %d, min %d → %d ms', (msBeforeNext, remaining, consumed, minDelayMs, delayMs) => {
    expect(execEvenlyDelayMs(new RateLimiterRes(remaining, msBeforeNext, consumed), minDelayMs)).toBe(delayMs);
  });
});
