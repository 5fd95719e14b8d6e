// The store and its object on Node, with a model of a Durable Object namespace: one object per
// name, its events delivered one at a time (the input gate, while the object awaits its storage),
// its storage a Map of structured clones. The conformance and differential suites run here on
// that model; store.workerd.test.ts runs the conformance suite on workerd's real Durable Objects.
import { createLimiter, RateKitError, RateKitOptionError } from '@ratekit/core';
import { ask, freshNamespace, limits, testDifferential, testStore } from '@ratekit/test-utils';
import { type DurableObjectStorageLike, EXPIRY_SLACK_MS, RateLimitObject } from './object.js';
import { type DurableObjectNamespaceLike, durableObjectStore } from './store.js';
import { objectName } from './wire.js';

/** A Map-backed storage, as the object sees it; `alarmAtMs` is readable by the tests. */
class ModelStorage implements DurableObjectStorageLike {
  readonly data = new Map<string, unknown>();
  alarmAtMs: number | null = null;
  async get(keys: string[]) {
    return new Map(keys.filter((k) => this.data.has(k)).map((k) => [k, structuredClone(this.data.get(k))]));
  }
  async put(entries: Record<string, unknown>) {
    for (const [k, v] of Object.entries(entries)) this.data.set(k, structuredClone(v));
  }
  async delete(keys: string[]) {
    return keys.filter((k) => this.data.delete(k)).length;
  }
  async list({ prefix }: { prefix: string }) {
    return new Map([...this.data].filter(([k]) => k.startsWith(prefix)));
  }
  async deleteAll() {
    this.data.clear();
  }
  async getAlarm() {
    return this.alarmAtMs;
  }
  async setAlarm(atMs: number) {
    this.alarmAtMs = atMs;
  }
}

/** A namespace of objects: `objects` by name, each with its storage and one event at a time. */
function modelNamespace() {
  const objects = new Map<string, { object: RateLimitObject; storage: ModelStorage; gate: Promise<unknown> }>();
  let calls = 0;
  const namespace: DurableObjectNamespaceLike = {
    idFromName: (name) => name,
    get: (id) => ({
      fetch: (url, init) => {
        calls++;
        const name = id as unknown as string;
        let entry = objects.get(name);
        if (entry === undefined) {
          const storage = new ModelStorage();
          entry = { object: new RateLimitObject({ storage }), storage, gate: Promise.resolve() };
          objects.set(name, entry);
        }
        const { object } = entry;
        const response = entry.gate.then(() => object.fetch(new Request(url, init)));
        entry.gate = response.catch(() => undefined);
        return response;
      },
    }),
  };
  return { namespace, objects, calls: () => calls };
}

describe('durableObjectStore options', () => {
  const { namespace } = modelNamespace();

  it.each([
    ['no namespace', undefined],
    ['a string', 'RATE_LIMITER'],
    ['an object without idFromName', { get: () => undefined }],
  ])('throws a coded option error for %s as the namespace', (_, value) => {
    expect(() => durableObjectStore({ namespace: value as never })).toThrow(RateKitOptionError);
    expect(() => durableObjectStore({ namespace: value as never })).toThrow(/Expected `namespace` to be a Durable Object namespace binding/);
  });

  it.each([0, 1.5, -2])('refuses shards %p', (shards) => {
    expect(() => durableObjectStore({ namespace, shards })).toThrow(/Expected `shards` to be an integer >= 1/);
  });

  it('refuses an unknown clock', () => {
    expect(() => durableObjectStore({ namespace, clock: 'local' as never })).toThrow(/`clock` to be one of 'server', 'caller', got "local"/);
  });

  it('describes itself: shared, on the server (object) clock by default', () => {
    const store = durableObjectStore({ namespace });
    expect([store.name, store.shared, store.clock]).toEqual(['durable-object', true, 'server']);
  });
});

describe('object names', () => {
  it('gives each (namespace, key) its own object, never the same name for two pairs', () => {
    const pairs: Array<[string, string]> = [
      ['a', 'b:c'],
      ['a:b', 'c'],
      ['', '1:a:b'],
      ['1:a', 'b'],
    ];
    const names = pairs.map(([ns, key]) => objectName(ns, key, undefined));
    expect(new Set(names).size).toBe(pairs.length);
  });

  it('with shards, spreads keys over exactly that many objects per namespace', () => {
    const names = new Set(Array.from({ length: 2_000 }, (_, i) => objectName('api', `client-${i}`, 8)));
    expect(names.size).toBe(8);
    expect(objectName('api', 'k', 8)).toBe(objectName('api', 'k', 8));
    expect(objectName('api', 'k', 8)).not.toBe(objectName('web', 'k', 8));
  });
});

describe('on a model of Durable Objects', () => {
  const model = modelNamespace();
  testStore({ name: 'durable-object (caller clock)', makeStore: () => durableObjectStore({ namespace: model.namespace, clock: 'caller' }) });
  testStore({ name: 'durable-object (server clock)', clock: 'server', makeStore: () => durableObjectStore({ namespace: model.namespace }) });
  testStore({ name: 'durable-object (8 shards)', makeStore: () => durableObjectStore({ namespace: model.namespace, clock: 'caller', shards: 8 }) });
  testDifferential({ name: 'durable-object', makeStore: () => durableObjectStore({ namespace: model.namespace, clock: 'caller' }) });

  it('makes one call to the object per decision', async () => {
    const store = durableObjectStore({ namespace: model.namespace, clock: 'caller' });
    const before = model.calls();
    const namespace = freshNamespace('calls');
    for (let i = 0; i < 4; i++) await ask(store, { namespace, limits: limits({ algorithm: 'gcra', limit: 2, windowMs: 1_000 }, { limit: 100, windowMs: 60_000 }) });
    expect(model.calls() - before).toBe(4);
  });

  it("raises the object's alarm to the last state's end (on the object's clock) plus the slack, and the alarm empties the storage", async () => {
    const t0 = 1_700_000_000_000;
    let objectNowMs = t0;
    const clock = jest.spyOn(Date, 'now').mockImplementation(() => objectNowMs);
    try {
      const store = durableObjectStore({ namespace: model.namespace });
      const namespace = freshNamespace('alarm');
      objectNowMs = t0 + 2_000;
      await ask(store, { namespace, limits: limits({ limit: 5, windowMs: 10_000 }) });
      const entry = model.objects.get(store.objectNameFor('client', namespace))!;
      // A fixed window of 10 s from its first request: its state is needed until its end.
      expect(entry.storage.alarmAtMs).toBe(t0 + 2_000 + 10_000 + EXPIRY_SLACK_MS);
      objectNowMs = t0 + 3_000;
      await ask(store, { namespace, limits: limits({ algorithm: 'gcra', limit: 1, windowMs: 60_000 }) });
      expect(entry.storage.alarmAtMs).toBe(t0 + 3_000 + 60_000 + EXPIRY_SLACK_MS);
      // A later, shorter state never lowers it.
      objectNowMs = t0 + 4_000;
      await ask(store, { namespace, limits: limits({ limit: 5, windowMs: 10_000 }) });
      expect(entry.storage.alarmAtMs).toBe(t0 + 63_000 + EXPIRY_SLACK_MS);
      expect(entry.storage.data.size).toBe(2);
      await entry.object.alarm();
      expect(entry.storage.data.size).toBe(0);
    } finally {
      clock.mockRestore();
    }
  });

  it("on the caller's clock, still sets the alarm on the object's: a replayed past time never sets one in the past", async () => {
    const store = durableObjectStore({ namespace: model.namespace, clock: 'caller' });
    const namespace = freshNamespace('alarm-caller');
    const before = Date.now();
    await ask(store, { namespace, limits: limits({ limit: 5, windowMs: 10_000 }), nowMs: 1_000 });
    const alarmAtMs = model.objects.get(store.objectNameFor('client', namespace))!.storage.alarmAtMs!;
    expect(alarmAtMs).toBeGreaterThanOrEqual(before + 10_000 + EXPIRY_SLACK_MS);
    expect(alarmAtMs).toBeLessThanOrEqual(Date.now() + 10_000 + EXPIRY_SLACK_MS);
  });

  it('rejects with ERR_RATEKIT_STORE when the object fails, and the limiter applies onStoreError', async () => {
    const broken: DurableObjectNamespaceLike = { idFromName: (name) => name, get: () => ({ fetch: async () => new Response('ratekit: storage unavailable', { status: 500 }) }) };
    const store = durableObjectStore({ namespace: broken });
    const error = await ask(store, { namespace: 'n', limits: limits({ limit: 1, windowMs: 1_000 }) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateKitError);
    expect((error as RateKitError).code).toBe('ERR_RATEKIT_STORE');
    expect((error as Error).message).toMatch(/the object answered 500: ratekit: storage unavailable/);
    const reported: unknown[] = [];
    const limiter = createLimiter({ limits: [{ limit: 1, windowMs: 1_000 }], store, onStoreError: 'allow', onError: (e) => reported.push(e) });
    expect((await limiter.consume('k')).allowed).toBe(true);
    expect(reported).toHaveLength(1);
  });

  it('refuses a reply whose verdict this @ratekit/core does not reach, instead of reporting a decision that was not enforced', async () => {
    // An object claiming it admitted a request on a window whose single unit is used.
    const t0 = 1_700_000_000_000;
    const lying: DurableObjectNamespaceLike = {
      idFromName: (name) => name,
      get: () => ({ fetch: async () => new Response(JSON.stringify({ nowMs: t0, states: [[t0, 1]], allowed: true })) }),
    };
    const store = durableObjectStore({ namespace: lying, clock: 'caller' });
    await expect(ask(store, { namespace: 'n', limits: limits({ limit: 1, windowMs: 60_000 }), nowMs: t0 })).rejects.toThrow(/admitted a request that this @ratekit\/core refuses/);
  });
});
