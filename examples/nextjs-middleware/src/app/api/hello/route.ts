// A route handler with a limit of its own, from @ratekit/fetch: 3 requests per 10 seconds per client, on top of
// the proxy's 5 per 10 seconds for all of /api. Its responses carry the draft-8 RateLimit and RateLimit-Policy
// fields; a refusal is @ratekit/fetch's 429 with Retry-After.
//
// The count lives in the same Redis as the proxy's (@ratekit/redis/upstash over the Upstash REST API), so every
// instance of the app shares it.
import { rateLimit, withHeaders } from '@ratekit/fetch';
import { upstashStore } from '@ratekit/redis/upstash';
import { Redis } from '../../../lib/ratelimit';

const createLimit = () =>
  rateLimit({
    limits: [{ name: 'hello', algorithm: 'sliding-window', limit: 3, windowMs: 10_000 }],
    ipHeader: 'x-real-ip', // set by Vercel's edge, or your own reverse proxy (see proxy.ts)
    store: upstashStore({ redis: Redis.fromEnv() }),
    prefix: `${process.env.RATELIMIT_PREFIX ?? 'ratekit'}:hello:`,
  });
// Built on the first request, not when `next build` loads this module to collect its config (without the
// Upstash variables, which only the server has).
let limit: ReturnType<typeof createLimit> | undefined;

export async function GET(request: Request) {
  const result = await (limit ??= createLimit())(request);
  if (result.response) return result.response;
  return withHeaders(Response.json({ hello: 'world' }), result.headers);
}
