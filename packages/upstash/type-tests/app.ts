// An app written against @upstash/ratelimit 2.2.0's types. src/drop-in-types.test.ts compiles it as is
// against @upstash/ratelimit (so it is valid code for the incumbent), then with the
// '@upstash/ratelimit' specifier changed to '@ratekit/upstash' and nothing else, under `strict`.
import { Analytics, type Duration, IpDenyList, MultiRegionRatelimit, Ratelimit, type RatelimitConfig } from '@upstash/ratelimit';
import { Redis } from '@upstash/redis';

const redis = new Redis({ url: 'https://example.upstash.io', token: 'token' });
const window: Duration = '10 s';

const config: RatelimitConfig = {
  redis,
  limiter: Ratelimit.slidingWindow(10, window),
  prefix: 'api',
  ephemeralCache: new Map<string, number>(),
  timeout: 1_000,
  dynamicLimits: true,
  analytics: false,
};
export const ratelimit = new Ratelimit(config);
export const limiters = [Ratelimit.fixedWindow(5, '1 m'), Ratelimit.tokenBucket(1, '1s', 5), Ratelimit.cachedFixedWindow(10, '500ms')];
export const regions = new MultiRegionRatelimit({ redis: [redis, Redis.fromEnv()], limiter: MultiRegionRatelimit.fixedWindow(10, '10 s'), timeout: 500 });
export const regionsSliding = MultiRegionRatelimit.slidingWindow(5, '1 m');
export const plain = new Ratelimit({ redis: Redis.fromEnv(), limiter: Ratelimit.fixedWindow(100, '1 h'), ephemeralCache: false });

export async function handler(id: string): Promise<Response> {
  const { success, limit, remaining, reset, pending, reason } = await ratelimit.limit(id, { rate: 2 });
  await pending;
  const why: 'timeout' | 'cacheBlock' | 'denyList' | undefined = reason;
  const waited = await ratelimit.blockUntilReady(id, 1_000);
  const usage: { remaining: number; reset: number; limit: number } = await ratelimit.getRemaining(id);
  await ratelimit.resetUsedTokens(id);
  await ratelimit.setDynamicLimit({ limit: 5 });
  await ratelimit.setDynamicLimit({ limit: false });
  const { dynamicLimit }: { dynamicLimit: number | null } = await ratelimit.getDynamicLimit();
  const body = JSON.stringify({ limit, remaining, reset, why, waited: waited.success, usage, dynamicLimit });
  const multi = await regions.limit(id);
  await multi.pending;
  return new Response(body, { status: success && multi.success ? 200 : 429 });
}

// Deny lists and analytics.
export const protectedLimiter = new Ratelimit({ redis, limiter: Ratelimit.fixedWindow(10, '10 s'), enableProtection: true, denyListThreshold: 7, analytics: true });
export const analytics = new Analytics({ redis, prefix: 'api' });

export async function protectedHandler(id: string, ip: string): Promise<Response> {
  const { success, reason, deniedValue, pending } = await protectedLimiter.limit(id, { ip, userAgent: 'curl', country: 'DE', geo: { country: 'DE', city: 'Berlin' } });
  await pending;
  const denied: string | undefined = reason === 'denyList' ? deniedValue : undefined;
  await IpDenyList.updateIpDenyList(redis, 'api', 8);
  await IpDenyList.disableIpDenyList(redis, 'api');
  const thresholdError: boolean = (await IpDenyList.updateIpDenyList(redis, 'api', 9).catch((e: unknown) => e)) instanceof IpDenyList.ThresholdError;
  await analytics.record({ identifier: id, time: Date.now(), success: 'denied', country: 'DE' });
  const usage: Record<string, { success: number; blocked: number }> = await analytics.getUsage(Date.now() - 86_400_000);
  const top = await analytics.getMostAllowedBlocked(24, 5);
  const series = await analytics.getUsageOverTime(24, 'identifier');
  return new Response(JSON.stringify({ denied, thresholdError, usage, top: top.allowed.length, series: series.length }), { status: success ? 200 : 403 });
}
