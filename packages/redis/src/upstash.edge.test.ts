// The Upstash store on Bun, Deno and workerd (the runtime matrix, scripts/runtimes): the built
// @ratekit/redis/upstash and @upstash/redis, each as that runtime resolves them, against the REST
// endpoint the matrix starts on Node in front of a real Redis. (Node: upstash.test.ts.)
import { ask, freshNamespace, limits, testStore, upstashEndpoint } from '@ratekit/test-utils';
import { upstashStore } from '@ratekit/redis/upstash';
import { Redis } from '@upstash/redis';

const open = (clock: 'server' | 'caller') => upstashStore({ redis: new Redis({ ...upstashEndpoint(), retry: false, enableTelemetry: false }), clock, prefix: 'ratekit-upstash-edge:' });

testStore({ name: 'upstash (REST, caller clock)', makeStore: () => open('caller') });
testStore({ name: 'upstash (REST, server clock)', clock: 'server', resetKeyNeedsLimits: true, makeStore: () => open('server') });

describe('upstash store on this runtime', () => {
  it('decides a three-limit policy all-or-nothing on the server clock', async () => {
    const store = open('server');
    const namespace = freshNamespace('edge');
    const policy = limits(
      { algorithm: 'gcra', limit: 3, windowMs: 60_000 },
      { algorithm: 'sliding-window', limit: 100, windowMs: 60_000 },
      { name: 'daily', algorithm: 'token-bucket', limit: 1_000, windowMs: 86_400_000 },
    );
    const allowed: boolean[] = [];
    for (let i = 0; i < 5; i++) allowed.push((await ask(store, { namespace, limits: policy, nowMs: 0 })).allowed);
    expect(allowed).toEqual([true, true, true, false, false]);
    // The refusals charged no other limit: the sliding window holds the 3 admitted only.
    const peek = await ask(store, { namespace, limits: policy, mode: 'peek', nowMs: 0 });
    expect(peek.limits.map((l) => l.remaining)).toEqual([0, 97, 997]);
  });
});
