import { BurstyRateLimiter } from './bursty.js';
import { RateLimiterMemory } from './memory.js';
import { RateLimiterQueue } from './queue.js';
import { RateLimiterQueueError } from './queue-error.js';

const T0 = 1_700_000_000_000; // a whole second, so Unix-second deadlines fall on window edges

describe('RateLimiterQueue', () => {
  beforeEach(() => {
    jest.useFakeTimers({ now: T0 });
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  /** Records the order in which promises settle. */
  const track = (order: string[], name: string, promise: Promise<number>) =>
    promise.then(
      (remaining) => order.push(`${name}:${remaining}`),
      (err: Error) => order.push(`${name}:${err.message}`),
    );

  describe('while the limiter admits', () => {
    it('resolves at once with the remaining points', async () => {
      const queue = new RateLimiterQueue(new RateLimiterMemory({ points: 2, duration: 1 }));
      expect(await queue.removeTokens(1)).toBe(1);
      expect(await queue.removeTokens(1)).toBe(0);
    });
  });

  describe('once the limiter refuses', () => {
    it('waits until the window ends, then serves the waiting requests in FIFO order', async () => {
      const queue = new RateLimiterQueue(new RateLimiterMemory({ points: 1, duration: 1 }));
      const order: string[] = [];
      const all = ['a', 'b', 'c', 'd'].map((name) => track(order, name, queue.removeTokens(1)));
      await jest.advanceTimersByTimeAsync(0);
      expect(order).toEqual(['a:0']);
      await jest.advanceTimersByTimeAsync(999);
      expect(order).toEqual(['a:0']);
      await jest.advanceTimersByTimeAsync(1);
      expect(order).toEqual(['a:0', 'b:0']);
      await jest.advanceTimersByTimeAsync(2000);
      await Promise.all(all);
      expect(order).toEqual(['a:0', 'b:0', 'c:0', 'd:0']);
      expect(Date.now() - T0).toBe(3000);
    });

    it('never admits more than the limiter does', async () => {
      const limiter = new RateLimiterMemory({ points: 3, duration: 1 });
      const queue = new RateLimiterQueue(limiter);
      const served: number[] = [];
      for (let i = 0; i < 10; i += 1) void queue.removeTokens(1).then(() => served.push(Date.now() - T0));
      await jest.advanceTimersByTimeAsync(5000);
      expect(served).toEqual([0, 0, 0, 1000, 1000, 1000, 2000, 2000, 2000, 3000]);
    });

    it('keeps a new request behind the waiting ones', async () => {
      const queue = new RateLimiterQueue(new RateLimiterMemory({ points: 1, duration: 1 }));
      const order: string[] = [];
      void track(order, 'a', queue.removeTokens(1));
      void track(order, 'b', queue.removeTokens(1));
      await jest.advanceTimersByTimeAsync(500);
      void track(order, 'c', queue.removeTokens(1));
      await jest.advanceTimersByTimeAsync(2500);
      expect(order).toEqual(['a:0', 'b:0', 'c:0']);
    });

    it('waits at most 2^31 - 1 ms at a time for a key blocked longer (Node would fire a longer timer at once)', async () => {
      const limiter = new RateLimiterMemory({ points: 1, duration: 1 });
      const queue = new RateLimiterQueue(limiter);
      await limiter.block('limiter', 30 * 24 * 3600); // 30 days
      const consume = jest.spyOn(limiter, 'consume');
      void queue.removeTokens(1);
      await jest.advanceTimersByTimeAsync(1000);
      expect(consume).toHaveBeenCalledTimes(1);
      await jest.advanceTimersByTimeAsync(2_147_483_647);
      expect(consume).toHaveBeenCalledTimes(2);
    });

    it('keeps one FIFO queue per key', async () => {
      const queue = new RateLimiterQueue(new RateLimiterMemory({ points: 1, duration: 1 }));
      const order: string[] = [];
      void track(order, 'x1', queue.removeTokens(1, 'x'));
      void track(order, 'x2', queue.removeTokens(1, 'x'));
      void track(order, 'y1', queue.removeTokens(1, 'y'));
      await jest.advanceTimersByTimeAsync(0);
      expect(order).toEqual(['x1:0', 'y1:0']);
      await jest.advanceTimersByTimeAsync(1000);
      expect(order).toEqual(['x1:0', 'y1:0', 'x2:0']);
    });

    it('waits for the smaller msBeforeNext of a BurstyRateLimiter', async () => {
      const bursty = new BurstyRateLimiter(new RateLimiterMemory({ points: 1, duration: 1 }), new RateLimiterMemory({ keyPrefix: 'burst', points: 1, duration: 3 }));
      const queue = new RateLimiterQueue(bursty);
      const served: number[] = [];
      for (let i = 0; i < 3; i += 1) void queue.removeTokens(1).then(() => served.push(Date.now() - T0));
      await jest.advanceTimersByTimeAsync(1000);
      expect(served).toEqual([0, 0, 1000]);
    });
  });

  describe('errors', () => {
    it('rejects more tokens than the limiter points with RateLimiterQueueError', async () => {
      const queue = new RateLimiterQueue(new RateLimiterMemory({ points: 2, duration: 1 }));
      const err: unknown = await queue.removeTokens(3).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RateLimiterQueueError);
      expect((err as Error).message).toBe('Requested tokens 3 exceeds maximum 2 tokens per interval');
    });

    it('rejects a request beyond maxQueueSize, and still serves the queued ones', async () => {
      const queue = new RateLimiterQueue(new RateLimiterMemory({ points: 1, duration: 1 }), { maxQueueSize: 1 });
      const order: string[] = [];
      void track(order, 'a', queue.removeTokens(1));
      void track(order, 'b', queue.removeTokens(1));
      void track(order, 'c', queue.removeTokens(1));
      await jest.advanceTimersByTimeAsync(0);
      expect(order).toEqual(['a:0', "c:Number of requests reached it's maximum 1"]);
      await jest.advanceTimersByTimeAsync(1000);
      expect(order).toEqual(['a:0', "c:Number of requests reached it's maximum 1", 'b:0']);
    });

    it('defaults maxQueueSize to 4294967295', () => {
      expect(new RateLimiterQueue(new RateLimiterMemory({ points: 1, duration: 1 }))._maxQueueSize).toBe(4294967295);
    });

    it('rejects a waiting request whose expiresUnixAt has come when the queue wakes', async () => {
      const queue = new RateLimiterQueue(new RateLimiterMemory({ points: 1, duration: 2 }));
      const order: string[] = [];
      void track(order, 'a', queue.removeTokens(1));
      void track(order, 'late', queue.removeTokens(1, 'limiter', T0 / 1000 + 1));
      void track(order, 'patient', queue.removeTokens(1));
      await jest.advanceTimersByTimeAsync(2000);
      expect(order).toEqual(['a:0', 'late:The request to remove tokens expired before it could be fulfilled', 'patient:0']);
    });

    it('rejects only the request a store failure answered, and goes on with the next', async () => {
      const limiter = new RateLimiterMemory({ points: 1, duration: 1 });
      const queue = new RateLimiterQueue(limiter);
      const order: string[] = [];
      void track(order, 'a', queue.removeTokens(1));
      void track(order, 'b', queue.removeTokens(1));
      void track(order, 'c', queue.removeTokens(1));
      await jest.advanceTimersByTimeAsync(0);
      const consume = limiter.consume.bind(limiter);
      jest.spyOn(limiter, 'consume').mockRejectedValueOnce(new Error('store down')).mockImplementation(consume);
      await jest.advanceTimersByTimeAsync(1000);
      expect(order).toEqual(['a:0', 'b:store down', 'c:0']);
    });
  });

  describe('getTokensRemaining', () => {
    it("answers the limiter's remaining points for the key", async () => {
      const queue = new RateLimiterQueue(new RateLimiterMemory({ points: 2, duration: 1 }));
      await queue.removeTokens(1);
      expect(await queue.getTokensRemaining()).toBe(1);
      expect(await queue.getTokensRemaining('other')).toBe(2);
    });

    it('answers the full points when the key has no record, or the store cannot be read (rlf 11.4)', async () => {
      const limiter = new RateLimiterMemory({ points: 23, duration: 1 });
      const queue = new RateLimiterQueue(limiter);
      await queue.removeTokens(1, 'k');
      await jest.advanceTimersByTimeAsync(1001);
      expect(await queue.getTokensRemaining('k')).toBe(23);
      jest.spyOn(limiter, 'get').mockRejectedValue(new Error('store down'));
      expect(await queue.getTokensRemaining('k')).toBe(23);
    });
  });
});
