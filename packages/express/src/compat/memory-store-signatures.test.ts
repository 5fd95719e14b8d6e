import { RateKitOptionError } from '@ratekit/core';
import { MemoryStore as ErlMemoryStore } from 'express-rate-limit';
import { MemoryStore } from './memory-store.js';
import { getValidations } from './validations.js';

/** express-rate-limit's validations object (the shape of its internal `getValidations()`), logging the codes it reports into `logged`. */
function validationsLoggingTo(logged: string[], validate = true) {
  const record = (error: unknown) => logged.push((error as { code: string }).code);
  return getValidations(validate, { warn: record, error: record });
}

/** What `init({ windowMs })` logs on a store built with fresh validations. */
function loggedByInit(build: (validations: ReturnType<typeof getValidations>) => { init(options: never): void; shutdown(): void }, windowMs: unknown): string[] {
  const logged: string[] = [];
  const store = build(validationsLoggingTo(logged));
  try {
    store.init({ windowMs } as never);
  } finally {
    store.shutdown();
  }
  return logged;
}

describe('new MemoryStore(validations): express-rate-limit’s signature', () => {
  it.each([0, -1, Number.NaN, '60000', 60_000])('reports windowMs %p in init as express-rate-limit’s store does with the same validations', (windowMs) => {
    const ours = loggedByInit((validations) => new MemoryStore(validations), windowMs);
    const theirs = loggedByInit((validations) => new ErlMemoryStore(validations as never), windowMs);
    expect(ours).toEqual(theirs);
    expect(ours).toEqual(typeof windowMs === 'number' && windowMs >= 1 ? [] : ['ERR_ERL_WINDOW_MS']);
  });

  it('reports nothing when the validations are turned off', () => {
    const logged: string[] = [];
    const store = new MemoryStore(validationsLoggingTo(logged, false));
    store.init({ windowMs: 0 });
    store.shutdown();
    expect(logged).toEqual([]);
  });

  it('otherwise is the store with its defaults: 100 000 keys, counting on the system clock', async () => {
    const store = new MemoryStore(validationsLoggingTo([]));
    store.init({ windowMs: 60_000 });
    try {
      expect(store.maxKeys).toBe(100_000);
      await store.increment('203.0.113.7');
      const before = Date.now();
      const client = await store.increment('203.0.113.7');
      const resetAt = client.resetTime?.getTime() ?? Number.NaN;
      expect(client.totalHits).toBe(2);
      expect(resetAt).toBeGreaterThan(before);
      expect(resetAt).toBeLessThanOrEqual(before + 60_000);
    } finally {
      store.shutdown();
    }
  });
});

describe('new MemoryStore(options): what is neither options nor validations', () => {
  it.each<[string, unknown, string]>([
    ['null', null, 'options'],
    ['a number', 42, 'options'],
    ['a string', 'maxKeys', 'options'],
    ['an array', [], 'options'],
    ['a windowMs that is not a method (the window is the limiter’s)', { windowMs: 60_000 }, 'windowMs'],
    ['a clock that is not a function', { now: 5 }, 'now'],
    ['a maxKeys below 1', { maxKeys: 0 }, 'maxKeys'],
  ])('fails on %s with ERR_RATEKIT_INVALID_OPTION naming the option', (_what, given, option) => {
    const build = () => new MemoryStore(given as never);
    expect(build).toThrow(RateKitOptionError);
    expect(build).toThrow(expect.objectContaining({ code: 'ERR_RATEKIT_INVALID_OPTION', option }));
  });
});
