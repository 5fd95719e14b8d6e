import { RateKitOptionError } from '../errors';
import { resolveMemoryStoreOptions } from './memory-options';

describe('resolveMemoryStoreOptions', () => {
  it('defaults to 100 000 keys and a prune every 60 s', () => {
    expect(resolveMemoryStoreOptions({})).toEqual({ maxKeys: 100_000, pruneIntervalMs: 60_000 });
  });

  it('keeps given values, 0 included for pruneIntervalMs (no pruning)', () => {
    expect(resolveMemoryStoreOptions({ maxKeys: 1, pruneIntervalMs: 0 })).toEqual({ maxKeys: 1, pruneIntervalMs: 0 });
  });

  it.each([0, 1.5, -1, Number.NaN, '10'])('refuses maxKeys %p, naming it', (maxKeys) => {
    expect(() => resolveMemoryStoreOptions({ maxKeys: maxKeys as number })).toThrow(RateKitOptionError);
    expect(() => resolveMemoryStoreOptions({ maxKeys: maxKeys as number })).toThrow('`maxKeys` to be an integer >= 1');
  });

  it.each([-1, Number.POSITIVE_INFINITY, Number.NaN])('refuses pruneIntervalMs %p, naming it', (pruneIntervalMs) => {
    expect(() => resolveMemoryStoreOptions({ pruneIntervalMs })).toThrow('`pruneIntervalMs` to be a finite number >= 0 of milliseconds');
  });
});
