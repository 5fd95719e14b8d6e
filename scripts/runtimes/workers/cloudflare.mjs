/* global describe, it, expect */
// @package cloudflare
// @workerd durable-object RATE_LIMITER=RateLimitObject
// A Worker whose limiter on Durable Objects is made at module scope, its namespace from `cloudflare:workers`' env:
// making the store must start no timer and do no I/O (workerd refuses both there); the Worker must then limit.
import { durableObjectStore } from '@ratekit/cloudflare';
import { createLimiter } from '@ratekit/core';
import { env } from 'cloudflare:workers';

export { RateLimitObject } from '@ratekit/cloudflare';

const limiter = createLimiter({ store: durableObjectStore({ namespace: env.RATE_LIMITER }), limits: { limit: 2, windowMs: 60_000 } });

describe('@ratekit/cloudflare made at module scope', () => {
  it('lets the Worker start, then admits 2 and refuses the third, on the object', async () => {
    const seen = [];
    for (let i = 0; i < 3; i++) seen.push((await limiter.consume('client')).allowed);
    expect(seen).toEqual([true, true, false]);
  });
});
