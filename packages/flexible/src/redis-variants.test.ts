import { randomUUID } from 'node:crypto';
import { describeWithService, redisService } from '@ratekit/test-utils';
import Valkey from 'iovalkey';
import { RateLimiterRedis as RlfRedis, RateLimiterRedisNonAtomic as RlfRedisNonAtomic } from 'rate-limiter-flexible';
import { RateLimiterRes } from './rate-limiter-res.js';
import { RateLimiterRedisNonAtomic, RateLimiterValkey } from './redis-variants.js';

/** What a call answered, with msBeforeNext to the second (the two calls of a step are a few ms apart). */
async function answer(call: Promise<unknown>): Promise<string> {
  try {
    const res = (await call) as RateLimiterRes | null;
    return res === null ? 'null' : `ok ${res.consumedPoints}/${res.remainingPoints} first=${String(res.isFirstInDuration)} ${Math.round(res.msBeforeNext / 1000)}s`;
  } catch (refusal) {
    if (!(refusal instanceof RateLimiterRes) && !(refusal instanceof Object && 'consumedPoints' in refusal)) throw refusal;
    const res = refusal as RateLimiterRes;
    return `refused ${res.consumedPoints}/${res.remainingPoints} ${Math.round(res.msBeforeNext / 1000)}s`;
  }
}

type Limiter = {
  consume(k: string, p?: number): Promise<unknown>;
  penalty(k: string, p?: number): Promise<unknown>;
  reward(k: string, p?: number): Promise<unknown>;
  get(k: string): Promise<unknown>;
};

/** rlf's store and ours take turns on one key of one Redis: every answer is the one rlf alone gives on its own key. */
async function mixedFleet(theirs: Limiter, ours: Limiter, reference: Limiter): Promise<void> {
  const mixed = `mixed-${randomUUID()}`;
  const alone = `alone-${randomUUID()}`;
  const steps: Array<[keyof Limiter, number]> = [
    ['consume', 1],
    ['consume', 2],
    ['get', 0],
    ['penalty', 1],
    ['reward', 2],
    ['consume', 2],
    ['consume', 1],
    ['consume', 1],
    ['get', 0],
  ];
  for (const [i, [op, points]] of steps.entries()) {
    const turn = i % 2 === 0 ? theirs : ours;
    const [got, expected] = [await answer(op === 'get' ? turn.get(mixed) : turn[op](mixed, points)), await answer(op === 'get' ? reference.get(alone) : reference[op](alone, points))];
    expect(`${op} ${points}: ${got}`).toBe(`${op} ${points}: ${expected}`);
  }
}

describeWithService(redisService, "rlf's RateLimiterValkey and RateLimiterRedisNonAtomic, served by RateLimiterRedis", (server) => {
  let valkey: Valkey;
  beforeAll(async () => {
    valkey = new Valkey(server().url);
    await new Promise<void>((resolve, reject) => valkey.once('ready', resolve).once('error', reject));
  });
  afterAll(async () => {
    await valkey.quit();
  });

  // rlf's own RateLimiterValkey cannot run here: its script calls `server.call`, which only Valkey 8 defines (Redis 7
  // answers "Script attempted to access nonexistent global variable 'server'"). Its data is RateLimiterRedis's, so
  // ours, on an iovalkey client, is checked against rlf's RateLimiterRedis on the same keys.
  it('RateLimiterValkey on an iovalkey client counts together with rlf 11.4 (RateLimiterRedis, the same data) on the same keys', async () => {
    const options = { storeClient: valkey, keyPrefix: `valkey-${randomUUID()}`, points: 5, duration: 60 };
    await mixedFleet(new RlfRedis(options), new RateLimiterValkey(options), new RlfRedis(options));
  });

  it('RateLimiterRedisNonAtomic counts together with rlf 11.4 on the same keys', async () => {
    const options = { storeClient: valkey, keyPrefix: `nonatomic-${randomUUID()}`, points: 5, duration: 60 };
    await mixedFleet(new RlfRedisNonAtomic(options), new RateLimiterRedisNonAtomic(options), new RlfRedisNonAtomic(options));
  });

  it("maps rlf's rejectIfValkeyNotReady to the readiness check", async () => {
    const closed = new Valkey(server().url, { lazyConnect: true });
    const limiter = new RateLimiterValkey({ storeClient: closed, points: 5, duration: 60, rejectIfValkeyNotReady: true });
    await expect(limiter.consume('k')).rejects.toBeInstanceOf(Error);
    closed.disconnect();
  });
});
