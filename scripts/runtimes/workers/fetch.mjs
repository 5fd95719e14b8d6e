/* global describe, it, expect */
// @package fetch
// A Worker as the @ratekit/fetch README writes it: the limit function made at module scope, the client from
// Cloudflare's cf-connecting-ip, background work handed to ctx.waitUntil. It must let the Worker start, then limit.
import { rateLimit } from '@ratekit/fetch';

const decided = [];
const limit = rateLimit({ limit: 2, windowMs: 60_000, ipHeader: 'cf-connecting-ip', onDecision: async (decision) => decided.push(decision.allowed) });

const worker = {
  async fetch(request, env, ctx) {
    const result = await limit(request, { context: ctx });
    if (result.response) return result.response;
    return new Response('ok', { headers: result.headers });
  },
};

describe('@ratekit/fetch made at module scope', () => {
  it('lets the Worker start, then answers 200, 200, 429 with Retry-After', async () => {
    const pending = [];
    const ctx = { waitUntil: (promise) => pending.push(promise) };
    const responses = [];
    for (let i = 0; i < 3; i++) responses.push(await worker.fetch(new Request('https://worker.example/', { headers: { 'cf-connecting-ip': '203.0.113.9' } }), {}, ctx));
    expect(responses.map((response) => response.status)).toEqual([200, 200, 429]);
    // onDecision ran in the background, through ctx.waitUntil, once per request.
    expect(pending).toHaveLength(3);
    await Promise.all(pending);
    expect(decided).toEqual([true, true, false]);
    expect(Number(responses[2].headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
