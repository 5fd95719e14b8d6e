// The proxy: Next.js 16's name for middleware (middleware.ts and `export function middleware` still run in 16,
// deprecated). It runs before every request its matcher selects, here /api/*, on the Node.js runtime.
//
// Each client gets 5 requests per sliding 10-second window, counted in Redis through Upstash's REST API
// (UPSTASH_REDIS_REST_URL, UPSTASH_REDIS_REST_TOKEN). A request over the limit is answered here with 429 and
// never reaches the route; one within it goes on with its X-RateLimit-* fields added to the route's response.
import { NextResponse, type NextFetchEvent, type NextRequest } from 'next/server';
import { Ratelimit, Redis } from './lib/ratelimit';

const LIMIT = 5;
const WINDOW_SECONDS = 10;

const ratelimit = new Ratelimit({
  redis: Redis.fromEnv(),
  limiter: Ratelimit.slidingWindow(LIMIT, `${WINDOW_SECONDS} s`),
  // The keys' prefix; the demo gives each run its own (the default is '@upstash/ratelimit').
  prefix: process.env.RATELIMIT_PREFIX ?? '@upstash/ratelimit',
});

export async function proxy(request: NextRequest, event: NextFetchEvent) {
  // Next.js 15 removed `request.ip`. Vercel's edge sets x-real-ip to the client's address (and overwrites
  // what the client sent); self-hosted, the reverse proxy in front of `next start` must do the same. A request
  // without it shares one budget with every other such request: nobody gets more by leaving it out.
  const ip = request.headers.get('x-real-ip') ?? 'unknown';
  const { success, limit, remaining, reset, pending } = await ratelimit.limit(ip);
  // Work the limiter does after deciding (analytics, multi-region sync) finishes after the response is sent.
  event.waitUntil(pending);

  // `reset` is a Unix time in milliseconds.
  const resetSeconds = Math.max(0, Math.ceil((reset - Date.now()) / 1000));
  const legacy = {
    'X-RateLimit-Limit': String(limit),
    'X-RateLimit-Remaining': String(remaining),
    'X-RateLimit-Reset': String(Math.ceil(reset / 1000)),
  };
  if (!success) {
    return NextResponse.json(
      { error: 'Too many requests', retryAfterSeconds: resetSeconds },
      {
        status: 429,
        headers: {
          // IETF draft-7 fields, then the legacy ones most clients read.
          RateLimit: `limit=${limit}, remaining=${remaining}, reset=${resetSeconds}`,
          'RateLimit-Policy': `${LIMIT};w=${WINDOW_SECONDS}`,
          ...legacy,
          'Retry-After': String(Math.max(1, resetSeconds)),
        },
      },
    );
  }
  // The route's own RateLimit fields (see app/api/hello) are left alone: only X-RateLimit-* come from here.
  return NextResponse.next({ headers: legacy });
}

export const config = { matcher: '/api/:path*' };
