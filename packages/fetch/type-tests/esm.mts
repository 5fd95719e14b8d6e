// An ESM app on the Fetch API: the address per call (Bun's and Deno's shapes), a trusted edge header, a Worker's
// ctx, the result's two forms, and the calls TypeScript must refuse.
import { memoryStore, type Decision, type RateLimitStore } from '@ratekit/core';
import { rateLimit, type RateLimitOptions, type RateLimitResult, withHeaders } from '@ratekit/fetch';

const store: RateLimitStore = memoryStore();
const byAddress = rateLimit({ algorithm: 'gcra', limit: 100, windowMs: 60_000, standardHeaders: 'draft-8', store });

export async function bun(request: Request, server: { requestIP(request: Request): { address: string; family: string; port: number } | null }): Promise<Response> {
  const result: RateLimitResult = await byAddress(request, { ip: server.requestIP(request) });
  if (result.response) return result.response;
  const decision: Decision | undefined = result.decision;
  return new Response(String(decision?.remaining), { headers: result.headers });
}

export async function deno(request: Request, info: { remoteAddr: { hostname: string; port: number; transport: 'tcp' } }): Promise<Response> {
  const result = await byAddress(request, { ip: info.remoteAddr });
  if (!result.allowed) return result.response; // narrowed: a refusal always has its Response
  return new Response('ok', { headers: result.headers });
}

const behindCloudflare = rateLimit({
  limits: [
    { limit: 10, windowMs: 1_000 },
    { limit: 1_000, windowMs: 3_600_000 },
  ],
  ipHeader: 'cf-connecting-ip',
});
export async function worker(request: Request, ctx: { waitUntil(promise: Promise<unknown>): void }): Promise<Response> {
  const result = await behindCloudflare(request, { context: ctx });
  return result.response ?? withHeaders(new Response('ok'), result.headers);
}

const byKey = rateLimit({ keyGenerator: (request) => request.headers.get('x-api-key') ?? false, cost: (request) => (request.method === 'POST' ? 5 : 1) });
export const keyed: Promise<RateLimitResult> = byKey(new Request('https://example.com/'));

const options: RateLimitOptions = { limit: 5, onStoreError: 'allow', onDecision: async () => undefined };
export const fromOptions = rateLimit(options);
export const refunded = fromOptions.limiter.refund('203.0.113.7');

// @ts-expect-error the default key needs the client address: `ip` is required
byAddress(new Request('https://example.com/'));
// @ts-expect-error not an algorithm
rateLimit({ algorithm: 'leaky-faucet' });
// @ts-expect-error a refusal's status is a number
rateLimit({ statusCode: '429' });
