import { describeWithService, redisService } from '@ratekit/test-utils';
import { Redis } from 'ioredis';
import { createClient as createClient4 } from 'redis';
import { createClient as createClient5 } from 'redis5';
import { RateLimiterRes } from './rate-limiter-res.js';
import { RateLimiterRedis } from './redis.js';

/**
 * Coalescing never changes a result: the same schedule of operations, run
 * on two key prefixes of one Redis by a limiter that coalesces and by one
 * that does not, gives the same answers, turn by turn. A turn asks several
 * operations at once (in one iteration of the event loop, as concurrent
 * requests do) and waits for them all; both limiters run turn t before
 * either runs turn t + 1, so their keys' windows start within a few ms.
 *
 * Counts (consumedPoints, remainingPoints, isFirstInDuration, get's null,
 * delete's boolean, resolved or rejected) must be equal; msBeforeNext
 * within {@link MS_MARGIN}. And coalescing must really have happened: the
 * coalescing limiter sends fewer script calls.
 */

/** The two limiters' keys were written a few ms apart (each turn runs on one, then the other): 250 ms on a busy machine. */
const MS_MARGIN = 250;
const TURNS = 40;
const KEYS = ['a', 'b', 'c'];

type Operation =
  | { op: 'consume' | 'penalty' | 'reward'; key: string; points: number }
  | { op: 'get' | 'delete'; key: string }
  | { op: 'set'; key: string; points: number; seconds: number }
  | { op: 'block'; key: string; seconds: number };

/** A schedule from a fixed seed (a linear congruential generator): the test is the same on every run. */
function schedule(seed: number): Operation[][] {
  let state = seed;
  const next = (n: number) => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state % n;
  };
  const turns: Operation[][] = [];
  for (let t = 0; t < TURNS; t++) {
    const turn: Operation[] = [];
    const size = 1 + next(12);
    for (let i = 0; i < size; i++) {
      const key = KEYS[next(KEYS.length)]!;
      const roll = next(100);
      if (roll < 50) turn.push({ op: 'consume', key, points: 1 + next(2) });
      else if (roll < 60) turn.push({ op: 'penalty', key, points: 1 + next(3) });
      else if (roll < 70) turn.push({ op: 'reward', key, points: 1 + next(3) });
      else if (roll < 80) turn.push({ op: 'get', key });
      else if (roll < 85) turn.push({ op: 'set', key, points: next(4), seconds: next(2) === 0 ? 0 : 30 });
      else if (roll < 90) turn.push({ op: 'block', key, seconds: next(2) === 0 ? 0 : 40 });
      else turn.push({ op: 'delete', key });
    }
    turns.push(turn);
  }
  return turns;
}

type Answer = { settled: string; counts?: [number, number, boolean]; msBeforeNext?: number; value?: unknown };

function run(limiter: RateLimiterRedis, operation: Operation): Promise<Answer> {
  const call: Promise<unknown> = (() => {
    switch (operation.op) {
      case 'consume':
      case 'penalty':
      case 'reward':
        return limiter[operation.op](operation.key, operation.points);
      case 'get':
        return limiter.get(operation.key);
      case 'delete':
        return limiter.delete(operation.key);
      case 'set':
        // set(key, 0) is rlf's "0 points"; the points are integers ≥ 0 here.
        return limiter.set(operation.key, operation.points, operation.seconds);
      case 'block':
        return limiter.block(operation.key, operation.seconds);
    }
  })();
  const describe = (settled: string, value: unknown): Answer =>
    value instanceof RateLimiterRes
      ? { settled, counts: [value.consumedPoints, value.remainingPoints, value.isFirstInDuration], msBeforeNext: value.msBeforeNext }
      : { settled, value: value instanceof Error ? `Error: ${value.message}` : value };
  return call.then(
    (value) => describe('resolved', value),
    (reason: unknown) => describe('rejected', reason),
  );
}

/** The client, with a count of the script calls sent through it. */
function counted<T extends object>(client: T): { client: T; calls: () => number } {
  let calls = 0;
  const proxy = new Proxy(client, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if ((property === 'evalsha' || property === 'evalSha') && typeof value === 'function') {
        return (...args: unknown[]) => {
          calls++;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { client: proxy, calls: () => calls };
}

const CLIENTS: Record<string, (url: string) => Promise<{ client: object; close: () => Promise<unknown> }>> = {
  ioredis: async (url) => {
    const client = new Redis(url);
    await new Promise<void>((resolve, reject) => client.once('ready', resolve).once('error', reject));
    return { client, close: () => client.quit() };
  },
  'node-redis 4': async (url) => {
    const client = await createClient4({ url }).connect();
    return { client, close: () => client.quit() };
  },
  'node-redis 5': async (url) => {
    const client = await createClient5({ url }).connect();
    return { client, close: () => client.quit() };
  },
};

let prefixes = 0;

describeWithService(redisService, 'RateLimiterRedis coalescing, against the same schedule without it', (server) => {
  for (const [name, connect] of Object.entries(CLIENTS)) {
    for (const options of [
      { points: 5, duration: 20 },
      { points: 3, duration: 20, blockDuration: 60 },
    ]) {
      it(`${name}, ${JSON.stringify(options)}: the same answers, in fewer script calls`, async () => {
        const connected = await connect(server().url);
        try {
          const on = counted(connected.client);
          const off = counted(connected.client);
          const base = `rk-flex-coalesce-${process.pid}-${++prefixes}`;
          const coalescing = new RateLimiterRedis({ storeClient: on.client, keyPrefix: `${base}-on`, ...options });
          const direct = new RateLimiterRedis({ storeClient: off.client, keyPrefix: `${base}-off`, coalesce: false, ...options });
          let operations = 0;
          for (const [t, turn] of schedule(prefixes).entries()) {
            operations += turn.length;
            const withCoalescing = await Promise.all(turn.map((operation) => run(coalescing, operation)));
            const without = await Promise.all(turn.map((operation) => run(direct, operation)));
            for (const [i, answer] of without.entries()) {
              const { msBeforeNext: expectedMs, ...expected } = answer;
              const { msBeforeNext: actualMs, ...actual } = withCoalescing[i]!;
              const where = `turn ${t}, operation ${i} ${JSON.stringify(turn[i])}`;
              expect({ where, ...actual }).toEqual({ where, ...expected });
              if (expectedMs !== undefined && (expectedMs < 0 || actualMs! < 0)) expect({ where, ms: actualMs }).toEqual({ where, ms: expectedMs });
              else if (expectedMs !== undefined && Math.abs(actualMs! - expectedMs) > MS_MARGIN) throw new Error(`${where}: msBeforeNext ${actualMs}, expected ${expectedMs} ± ${MS_MARGIN}`);
            }
          }
          // Without coalescing: a call per operation (and per block). With it: far fewer.
          expect(off.calls()).toBeGreaterThanOrEqual(operations);
          expect(on.calls()).toBeLessThan(off.calls() * 0.6);
        } finally {
          await connected.close();
        }
      });
    }
  }

  it('an operation that fails inside a batch fails alone; the others of its batch are answered', async () => {
    const client = new Redis(server().url);
    try {
      const rl = new RateLimiterRedis({ storeClient: client, keyPrefix: `rk-flex-coalesce-${process.pid}-${++prefixes}`, points: 5, duration: 20 });
      await client.hset(rl.getKey('hash'), 'field', '1');
      // The first goes alone; the next three share one batch call.
      const answers = await Promise.all(['x', 'hash', 'y', 'x'].map((key) => run(rl, { op: 'consume', key, points: 1 })));
      expect(answers.map((a) => a.settled)).toEqual(['resolved', 'rejected', 'resolved', 'resolved']);
      expect(answers[1]!.value).toMatch(/^Error: .*WRONGTYPE/);
      expect(answers[3]!.counts).toEqual([2, 3, false]);
    } finally {
      await client.quit();
    }
  });
});
