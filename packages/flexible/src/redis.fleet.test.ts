import { describeWithService, redisService } from '@ratekit/test-utils';
import { Redis } from 'ioredis';
import { RateLimiterRedis as RlfRateLimiterRedis, RateLimiterRes as RlfRateLimiterRes } from 'rate-limiter-flexible';
import { createClient as createClient4 } from 'redis';
import { createClient as createClient5 } from 'redis5';
import { RateLimiterRes } from './rate-limiter-res.js';
import { RateLimiterRedis } from './redis.js';

/**
 * A mixed fleet on one Redis: rate-limiter-flexible 11.4's own
 * RateLimiterRedis (the devDependency) and ours, with the same options and
 * key prefix, take turns on the same keys, and must count exactly as a fleet
 * of rlf alone does.
 *
 * Each scenario runs three keys step by step: the mixed key (rlf and ours
 * alternating, starting with one, then the other: both directions), and a
 * reference key served by rlf alone. At every step both keys get the same
 * operation, back to back, and must give the same answer (resolved or
 * rejected; consumedPoints, remainingPoints and isFirstInDuration exactly;
 * msBeforeNext within {@link MS_MARGIN}) and hold the same data (the same
 * integer string; PTTL within the margin, or both without a TTL).
 */

/**
 * msBeforeNext and PTTL of the two keys may differ by the time between their
 * two operations of a step and between the keys' creations (both a few ms,
 * more on a busy machine): at most 250 ms.
 */
const MS_MARGIN = 250;

interface Connected {
  /** The client both limiters share. */
  readonly client: object;
  /** rlf's option for this client (rlf needs `useRedisPackage` for node-redis 5, rlf #314). */
  readonly rlfOptions: Record<string, unknown>;
  close(): Promise<unknown>;
}

const CLIENTS: Record<string, (url: string) => Promise<Connected>> = {
  ioredis: async (url) => {
    const client = new Redis(url);
    await new Promise<void>((resolve, reject) => client.once('ready', resolve).once('error', reject));
    return { client, rlfOptions: {}, close: () => client.quit() };
  },
  'node-redis 4': async (url) => {
    const client = await createClient4({ url }).connect();
    return { client, rlfOptions: {}, close: () => client.quit() };
  },
  'node-redis 5': async (url) => {
    const client = await createClient5({ url }).connect();
    return { client, rlfOptions: { useRedisPackage: true }, close: () => client.quit() };
  },
};

/** What a step does; the same on every key. */
type Step =
  { op: 'consume' | 'penalty' | 'reward'; points?: number; customDuration?: number } | { op: 'get' | 'delete' } | { op: 'set'; points: number; seconds: number } | { op: 'block'; seconds: number };

/** The part of both classes a step calls. */
interface Limiter {
  consume(key: string, points?: number, options?: Record<string, unknown>): Promise<unknown>;
  penalty(key: string, points?: number, options?: Record<string, unknown>): Promise<unknown>;
  reward(key: string, points?: number, options?: Record<string, unknown>): Promise<unknown>;
  get(key: string): Promise<unknown>;
  set(key: string, points: number, seconds: number): Promise<unknown>;
  block(key: string, seconds: number): Promise<unknown>;
  delete(key: string): Promise<boolean>;
  getKey(key: string): string;
}

interface Scenario {
  readonly name: string;
  readonly options: { points: number; duration: number; blockDuration?: number };
  readonly steps: readonly Step[];
}

const consume = (points?: number): Step => ({ op: 'consume', ...(points === undefined ? {} : { points }) });

const SCENARIOS: readonly Scenario[] = [
  {
    name: 'consume to the limit and past it, get, delete, consume again',
    options: { points: 3, duration: 30 },
    steps: [consume(), consume(), { op: 'get' }, consume(), consume(), consume(2), { op: 'get' }, { op: 'delete' }, { op: 'get' }, { op: 'delete' }, consume(), consume()],
  },
  {
    name: 'penalty and reward around consumes, reward below zero',
    options: { points: 4, duration: 30 },
    steps: [{ op: 'penalty', points: 2 }, consume(), { op: 'reward', points: 3 }, consume(), { op: 'penalty' }, consume(3), consume(), { op: 'reward', points: 10 }, { op: 'get' }, consume()],
  },
  {
    name: 'blockDuration: the consume that crosses the limit blocks the key, the next ones read the block',
    options: { points: 2, duration: 10, blockDuration: 60 },
    steps: [consume(), consume(), consume(), { op: 'get' }, consume(), consume(), { op: 'reward', points: 5 }, consume(), { op: 'get' }],
  },
  {
    name: 'block for seconds and forever, then consume; set with and without TTL, then consume',
    options: { points: 3, duration: 30 },
    steps: [
      { op: 'block', seconds: 40 },
      consume(),
      { op: 'get' },
      { op: 'block', seconds: 0 },
      consume(),
      { op: 'get' },
      { op: 'set', points: 1, seconds: 20 },
      consume(),
      consume(),
      { op: 'set', points: 2, seconds: 0 },
      consume(),
      { op: 'get' },
      { op: 'delete' },
      consume(),
    ],
  },
  {
    name: 'duration 0 (no TTL), customDuration, and a key without a TTL that a windowed consume fixes',
    options: { points: 3, duration: 0 },
    steps: [consume(), consume(), { op: 'get' }, { op: 'consume', customDuration: 20 }, { op: 'get' }, { op: 'delete' }, { op: 'consume', customDuration: 15 }, consume(), consume()],
  },
];

/** An answer, comparable across implementations: resolved or rejected, with its fields. */
type Answer =
  | { settled: 'resolved' | 'rejected'; kind: 'res'; consumedPoints: number; remainingPoints: number; isFirstInDuration: boolean; msBeforeNext: number }
  | { settled: 'resolved' | 'rejected'; kind: 'value'; value: unknown };

async function answer(limiter: Limiter, key: string, step: Step): Promise<Answer> {
  let call: Promise<unknown>;
  switch (step.op) {
    case 'consume':
    case 'penalty':
    case 'reward':
      call = limiter[step.op](key, step.points ?? 1, step.customDuration === undefined ? {} : { customDuration: step.customDuration });
      break;
    case 'get':
      call = limiter.get(key);
      break;
    case 'delete':
      call = limiter.delete(key);
      break;
    case 'set':
      call = limiter.set(key, step.points, step.seconds);
      break;
    case 'block':
      call = limiter.block(key, step.seconds);
      break;
  }
  const describe = (settled: 'resolved' | 'rejected', value: unknown): Answer => {
    if (value instanceof RateLimiterRes || value instanceof RlfRateLimiterRes) {
      const res = value as RateLimiterRes;
      return { settled, kind: 'res', consumedPoints: res.consumedPoints, remainingPoints: res.remainingPoints, isFirstInDuration: res.isFirstInDuration, msBeforeNext: res.msBeforeNext };
    }
    return { settled, kind: 'value', value: value instanceof Error ? `Error: ${value.message}` : value };
  };
  return call.then(
    (value) => describe('resolved', value),
    (reason: unknown) => describe('rejected', reason),
  );
}

/** msBeforeNext, or a PTTL: -1 (no TTL) must match exactly; a time, within the margin. */
function expectTimeClose(actual: number, expected: number, what: string): void {
  if (expected < 0 || actual < 0) {
    expect({ [what]: actual }).toEqual({ [what]: expected });
    return;
  }
  if (Math.abs(actual - expected) > MS_MARGIN) throw new Error(`${what}: ${actual} ms, expected ${expected} ms ± ${MS_MARGIN}`);
}

let runs = 0;

describeWithService(redisService, "a mixed fleet of rate-limiter-flexible 11.4's RateLimiterRedis and ours on one Redis", (server) => {
  let admin: Redis;
  beforeAll(async () => {
    admin = new Redis(server().url);
  });
  afterAll(async () => {
    await admin.quit();
  });

  for (const [clientName, connect] of Object.entries(CLIENTS)) {
    describe(clientName, () => {
      let connected: Connected;
      beforeAll(async () => {
        connected = await connect(server().url);
      });
      afterAll(async () => {
        await connected.close();
      });

      for (const scenario of SCENARIOS) {
        for (const first of ['rlf', 'ratekit'] as const) {
          it(`${scenario.name} (${first} first, then alternating)`, async () => {
            const keyPrefix = `rk-flex-fleet-${process.pid}-${++runs}`;
            const options = { storeClient: connected.client, keyPrefix, ...scenario.options };
            const rlf = new RlfRateLimiterRedis({ ...options, ...connected.rlfOptions }) as unknown as Limiter;
            const ours = new RateLimiterRedis(options) as unknown as Limiter;
            const turns = first === 'rlf' ? [rlf, ours] : [ours, rlf];
            const trace: string[] = [];
            for (const [i, step] of scenario.steps.entries()) {
              const reference = await answer(rlf, 'reference', step);
              const mixed = await answer(turns[i % 2]!, 'mixed', step);
              trace.push(`${i} ${step.op}: ${JSON.stringify(mixed)}`);
              const context = `step ${i} (${JSON.stringify(step)}) by ${i % 2 === 0 ? first : first === 'rlf' ? 'ratekit' : 'rlf'}\n${trace.join('\n')}`;
              try {
                if (reference.kind === 'res' && mixed.kind === 'res') {
                  const { msBeforeNext: referenceMs, ...referenceCounts } = reference;
                  const { msBeforeNext: mixedMs, ...mixedCounts } = mixed;
                  expect(mixedCounts).toEqual(referenceCounts);
                  expectTimeClose(mixedMs, referenceMs, 'msBeforeNext');
                } else {
                  expect(mixed).toEqual(reference);
                }
                // The data: the same integer string, the same TTL (or none).
                const [referenceKey, mixedKey] = [rlf.getKey('reference'), rlf.getKey('mixed')];
                expect(await admin.get(mixedKey)).toBe(await admin.get(referenceKey));
                expectTimeClose(await admin.pttl(mixedKey), await admin.pttl(referenceKey), 'PTTL');
              } catch (error) {
                throw new Error(`${context}\n${(error as Error).message}`, { cause: error });
              }
            }
          });
        }
      }
    });
  }
});
