// An app written against rate-limiter-flexible 11.4.0's types.d.ts, using its API broadly. scripts/type-tests.mjs
// compiles it as is against rate-limiter-flexible (so it is valid rlf code), then with every
// 'rate-limiter-flexible' specifier replaced by '@ratekit/flexible' and nothing else changed, under
// `tsc --strict`, node16 (as CommonJS and as ESM) and bundler resolution.
import {
  BurstyRateLimiter,
  RateLimiterCluster,
  RateLimiterClusterMaster,
  RateLimiterClusterMasterPM2,
  RateLimiterCompatibleAbstract,
  RateLimiterMemcache,
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterQueue,
  RateLimiterQueueError,
  RateLimiterRedis,
  RateLimiterRes,
  RateLimiterUnion,
  RLWrapperBlackAndWhite,
  RLWrapperTimeouts,
} from 'rate-limiter-flexible';
import type { IRateLimiterMemoryExport, IRateLimiterOptions, IRateLimiterRes, IRateLimiterRestoreDetailResponse, IRateLimiterRestoreResponse, RateLimiterLike } from 'rate-limiter-flexible';

declare const redisClient: unknown;
declare const memcachedClient: unknown;
declare const pgPool: unknown;
declare const pm2: unknown;

const options: IRateLimiterOptions = { points: 5, duration: 1, keyPrefix: 'app', blockDuration: 0, execEvenly: false };
const memory = new RateLimiterMemory(options);
const insured = new RateLimiterRedis({
  storeClient: redisClient,
  points: 10,
  duration: 60,
  inMemoryBlockOnConsumed: 10,
  inMemoryBlockDuration: 30,
  rejectIfRedisNotReady: true,
  useRedisPackage: false,
  insuranceLimiter: memory,
});
const memcache = new RateLimiterMemcache({ storeClient: memcachedClient, points: 3, duration: 10 });
const postgres = new RateLimiterPostgres(
  { storeClient: pgPool, storeType: 'pool', tableName: 'limits', schemaName: 'public', clearExpiredByTimeout: false, points: 3, duration: 10 },
  (error?: Error) => {
    if (error) console.error(error.message);
  },
);
const cluster = new RateLimiterCluster({ points: 5, duration: 1, timeoutMs: 3000 });
const master: RateLimiterClusterMaster = new RateLimiterClusterMaster();
const pm2Master = new RateLimiterClusterMasterPM2(pm2);
const bursty = new BurstyRateLimiter(memory, new RateLimiterMemory({ points: 10, duration: 60, keyPrefix: 'burst' }));
const listed = new RLWrapperBlackAndWhite({ limiter: memory, whiteList: ['127.0.0.1'], isBlackListed: (ip: string) => ip.startsWith('10.'), runActionAnyway: false });
const timed = new RLWrapperTimeouts({ limiter: insured, timeoutMs: 100 });
const union = new RateLimiterUnion(memory, memcache);
const queue = new RateLimiterQueue(memory, { maxQueueSize: 100 });
const burstyQueue = new RateLimiterQueue(bursty);

const likes: RateLimiterLike[] = [memory, insured, memcache, postgres, cluster, listed, timed];

function describeRes(res: RateLimiterRes): IRateLimiterRes {
  const plain = res.toJSON();
  const text: string = res.toString();
  return { msBeforeNext: res.msBeforeNext, remainingPoints: res.remainingPoints, consumedPoints: res.consumedPoints, isFirstInDuration: plain.isFirstInDuration && text.length > 0 };
}

async function handle(ip: string): Promise<number> {
  try {
    const res: RateLimiterRes = await memory.consume(ip, 2, { customDuration: 5 });
    await insured.penalty(ip);
    await insured.reward(ip, 1);
    await memcache.block(ip, 60);
    await postgres.set(ip, 3, 10);
    const got: RateLimiterRes | null = await insured.get(ip);
    const deleted: boolean = await cluster.delete(ip);
    insured.deleteInMemoryBlockedAll();
    memory.points = 6;
    memory.duration = 2;
    const key: string = memory.getKey(ip);
    const back: string = memory.parseKey(key);
    const ms: number = memory.msDuration + memory.msBlockDuration + memory.execEvenlyMinDelayMs;
    const byPrefix: Record<string, RateLimiterRes> = await union.consume(ip, 1);
    const firstPrefix: RateLimiterRes | undefined = byPrefix['app'];
    const tokens: number = await queue.removeTokens(1, ip);
    const remaining: number = await burstyQueue.getTokensRemaining();
    const burstRes: RateLimiterRes = await bursty.consume(ip);
    await Promise.all(likes.map((limiter) => limiter.consume(ip)));
    console.log(describeRes(res), got?.remainingPoints, deleted, back, ms, firstPrefix, tokens, remaining, burstRes, master, pm2Master);
    return res.remainingPoints;
  } catch (rejection) {
    if (rejection instanceof RateLimiterRes) return Math.ceil(rejection.msBeforeNext / 1000);
    if (rejection instanceof RateLimiterQueueError) return -1;
    if (rejection instanceof Error) throw rejection;
    const refusals = rejection as Record<string, RateLimiterRes>;
    return Object.keys(refusals).length;
  }
}

function persist(): void {
  const snapshot: IRateLimiterMemoryExport = memory.dump();
  const counts: IRateLimiterRestoreResponse | undefined = memory.restore(snapshot);
  const detail: IRateLimiterRestoreDetailResponse | undefined = memory.restore(snapshot, true);
  console.log(counts?.restored, detail?.invalid.keys);
}

class Custom extends RateLimiterCompatibleAbstract {}
console.log(new Custom() instanceof RateLimiterCompatibleAbstract);
void handle('127.0.0.1');
persist();
