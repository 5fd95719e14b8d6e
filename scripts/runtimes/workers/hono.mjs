/* global describe, it, expect */
// @package hono
// A Hono app on Workers as its docs write it: the app and its middleware made at module scope, the default key from
// Cloudflare's getConnInfo (cf-connecting-ip). Both ways in (ratekit mode and the hono-rate-limiter drop-in with its
// MemoryStore) must let the Worker start, then limit.
import { rateLimit, rateLimiter } from '@ratekit/hono';
import { Hono } from 'hono';
import { getConnInfo } from 'hono/cloudflare-workers';

const app = new Hono();
app.use('/ratekit/*', rateLimit({ getConnInfo, limit: 2, windowMs: 60_000 }));
app.use('/compat/*', rateLimiter({ windowMs: 60_000, limit: 2, keyGenerator: (c) => c.req.header('cf-connecting-ip') ?? 'unknown' }));
app.get('*', (c) => c.text('ok'));

const get = (path) => app.fetch(new Request(`https://worker.example${path}`, { headers: { 'cf-connecting-ip': '203.0.113.9' } }));

describe('@ratekit/hono made at module scope', () => {
  it.each(['/ratekit/x', '/compat/x'])('%s: lets the Worker start, then answers 200, 200, 429', async (path) => {
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await get(path)).status);
    expect(statuses).toEqual([200, 200, 429]);
  });
});
