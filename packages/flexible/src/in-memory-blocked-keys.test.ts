import { InMemoryBlockedKeys } from './in-memory-blocked-keys.js';

describe('InMemoryBlockedKeys (inMemoryBlockOnConsumed’s refusal list), on a fixed clock', () => {
  it('answers the ms left of a block until it ends, then 0', () => {
    const keys = new InMemoryBlockedKeys(10, () => 0);
    keys.addMs('k', 1000, 0);
    // time (ms) → msBeforeExpire
    const timeline: Array<[number, number]> = [
      [0, 1000],
      [999, 1],
      [1000, 0],
      [1001, 0],
    ];
    for (const [nowMs, msLeft] of timeline) expect([nowMs, keys.msBeforeExpire('k', nowMs)]).toEqual([nowMs, msLeft]);
    expect(keys.msBeforeExpire('other', 0)).toBe(0);
  });

  it('add() takes seconds', () => {
    const keys = new InMemoryBlockedKeys(10, () => 0);
    keys.add('k', 2, 100);
    expect(keys.msBeforeExpire('k', 100)).toBe(2000);
  });

  it('drops an ended entry when it is read, with no timer', () => {
    const keys = new InMemoryBlockedKeys(10, () => 0);
    keys.addMs('k', 10, 0);
    expect(keys.msBeforeExpire('k', 20)).toBe(0);
    expect(keys._keys.has('k')).toBe(false);
  });

  it('holds at most maxKeys entries, dropping the oldest (forgetting one only costs a store call)', () => {
    const keys = new InMemoryBlockedKeys(3, () => 0);
    for (const key of ['a', 'b', 'c', 'd']) keys.addMs(key, 60_000, 0);
    expect([...keys._keys.keys()]).toEqual(['b', 'c', 'd']);
  });

  it('sweeps ended entries once it passes 1000 keys, as rlf does', () => {
    const keys = new InMemoryBlockedKeys(10_000, () => 0);
    for (let i = 0; i < 1000; i++) keys.addMs(`old${i}`, 10, 0);
    keys.addMs('new', 60_000, 100); // the 1001st, at a time the others have ended
    expect(keys.size).toBe(1);
  });

  it('delete(key) unblocks one key, delete() all', () => {
    const keys = new InMemoryBlockedKeys(10, () => 0);
    keys.addMs('a', 100, 0);
    keys.addMs('b', 100, 0);
    keys.delete('a');
    expect([...keys._keys.keys()]).toEqual(['b']);
    keys.delete();
    expect(keys.size).toBe(0);
  });
});
