// The three places where @ratekit/fetch and @ratekit/hono's ratekit mode once disagreed (issue 37):
// both now stand on core's gate, and these specifications hold for each of them alike.
import { memoryStore, partitionKey, type RateLimitStore } from '@ratekit/core';
import { rateLimit as fetchRateLimit } from '@ratekit/fetch';
import { rateLimit as honoRateLimit } from '@ratekit/hono';
import { Hono } from 'hono';

const T0 = 1_700_000_000_000;
const now = () => T0;

/** One request through an adapter: its status and headers. The client address is `ip`. */
type Send = (ip: string, init?: { signal?: AbortSignal }) => Promise<{ status: number; headers: Headers }>;

/** An adapter built with `options` (the shared gate options), as a function of one request. */
const adapters: Record<string, (options: Record<string, unknown>) => Send> = {
  '@ratekit/fetch': (options) => {
    const limit = fetchRateLimit({ now, ...options });
    return async (ip, init) => {
      const request = new Request('http://app.test/', init);
      const result = await limit(request, { ip });
      return result.response ?? { status: 200, headers: result.headers };
    };
  },
  '@ratekit/hono': (options) => {
    const app = new Hono();
    app.use(
      honoRateLimit({
        now,
        getConnInfo: (c: { req: { header(name: string): string | undefined } }) => ({ remote: { address: c.req.header('x-test-socket') } }),
        standardHeaders: 'draft-8',
        ...options,
      }),
    );
    app.get('/', (c) => c.text('ok'));
    return async (ip, init) => {
      const response = await app.request('/', { headers: { 'x-test-socket': ip }, ...init });
      return { status: response.status, headers: response.headers };
    };
  },
};

/** A memory store that answers every call on a later turn, so that requests overlap. */
function slowStore(): RateLimitStore {
  const inner = memoryStore();
  return {
    ...inner,
    shared: false,
    evaluate: (request) => new Promise((resolve) => setTimeout(() => resolve(inner.evaluate(request)), 5)),
  };
}

describe.each(Object.keys(adapters))('%s on the gate', (name) => {
  const build = adapters[name]!;

  it('takes any positive limit, fractions included, as core does, and refuses 0 naming the option', async () => {
    const send = build({ limit: 1.5, windowMs: 60_000, algorithm: 'sliding-log', cost: 1 });
    expect((await send('192.0.2.1')).status).toBe(200);
    expect((await send('192.0.2.1')).status).toBe(429);
    expect(() => build({ limit: 0 })).toThrow('Expected `limit` to be a positive finite number, got 0');
  });

  it('stops holding a delayed request as soon as the client aborts it', async () => {
    const send = build({ algorithm: 'delay', limit: 1, windowMs: 60_000 });
    expect((await send('192.0.2.1')).status).toBe(200);
    const aborting = new AbortController();
    const held = send('192.0.2.1', { signal: aborting.signal });
    aborting.abort();
    // Without the abort this request would be held for 60 s, past the test's timeout.
    const answered = await held.then(
      (r) => r.status,
      () => 'rejected',
    );
    expect([200, 'rejected']).toContain(answered);
  });

  it('gives each of two overlapping requests the partition key of its own client', async () => {
    const send = build({ store: slowStore(), limit: 10 });
    const [a, b] = await Promise.all([send('192.0.2.1'), send('192.0.2.2')]);
    expect(a.headers.get('RateLimit-Policy')).toContain(`pk=:${partitionKey('192.0.2.1')}:`);
    expect(b.headers.get('RateLimit-Policy')).toContain(`pk=:${partitionKey('192.0.2.2')}:`);
  });
});
