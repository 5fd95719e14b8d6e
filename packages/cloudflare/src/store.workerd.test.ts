// @workerd durable-object RATEKIT_LIMITER=RateLimitObject
//
// The store and its object on workerd's real Durable Objects (the runtime matrix: this file is a
// Worker exporting the built RateLimitObject, bound as RATEKIT_LIMITER with in-memory storage):
// the conformance suite, one object per key and sharded, on the object's clock and the caller's, and
// the differential suite (random schedules against the in-memory store).
import { env } from 'cloudflare:workers';
import { durableObjectStore, type DurableObjectNamespaceLike } from '@ratekit/cloudflare';
import { ask, freshNamespace, limits, testDifferential, testStore } from '@ratekit/test-utils';

export { RateLimitObject } from '@ratekit/cloudflare';

const binding = () => env.RATEKIT_LIMITER as DurableObjectNamespaceLike;

testStore({ name: 'durable-object (workerd, object clock)', clock: 'server', makeStore: () => durableObjectStore({ namespace: binding() }) });
testStore({ name: 'durable-object (workerd, caller clock)', makeStore: () => durableObjectStore({ namespace: binding(), clock: 'caller' }) });
testDifferential({ name: 'durable-object (workerd)', makeStore: () => durableObjectStore({ namespace: binding(), clock: 'caller' }) });
testStore({ name: 'durable-object (workerd, 4 shards)', makeStore: () => durableObjectStore({ namespace: binding(), clock: 'caller', shards: 4 }) });

describe('durable-object store on workerd', () => {
  it('admits exactly the limit when 30 decisions on one key race, from two stores', async () => {
    const [a, b] = [durableObjectStore({ namespace: binding() }), durableObjectStore({ namespace: binding() })];
    const namespace = freshNamespace('race');
    const policy = limits({ algorithm: 'gcra', limit: 9, windowMs: 60_000 }, { algorithm: 'sliding-window', limit: 50, windowMs: 60_000 });
    const decisions = await Promise.all(Array.from({ length: 30 }, (_, i) => ask(i % 2 === 0 ? a : b, { namespace, limits: policy })));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(9);
    // The refusals charged nothing: the sliding window counts the 9 admitted only.
    const peek = await ask(a, { namespace, limits: policy, mode: 'peek' });
    expect(peek.limits[1]!.remaining).toBe(41);
  });

  it("decides on the object's clock: a Worker's nowMs of 0 changes nothing", async () => {
    const store = durableObjectStore({ namespace: binding() });
    const namespace = freshNamespace('clock');
    const decision = await ask(store, { namespace, limits: limits({ limit: 2, windowMs: 60_000 }), nowMs: 0 });
    expect(decision.allowed).toBe(true);
    // The object's Date.now(): this year, not 1970.
    expect(decision.nowMs).toBeGreaterThan(1_700_000_000_000);
  });
});
