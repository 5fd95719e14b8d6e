import { copyOut, isSlots, readSlot, Slots, workingArrays, writeSlot } from './entry';

describe('Slots', () => {
  it('keeps other slots in a list exactly as long as its content, and drops a slot set to undefined', () => {
    const slots = new Slots([1, 2]);
    slots.set('a', [3]);
    slots.set('b', [4]);
    expect(slots.others).toEqual(['a', [3], 'b', [4]]);
    slots.set('a', [5]);
    expect(slots.get('a')).toEqual([5]);
    slots.set('a', undefined);
    expect(slots.others).toEqual(['b', [4]]);
    expect(slots.get('a')).toBeUndefined();
  });

  it('is empty only when neither the primary slot nor any other holds a state', () => {
    const slots = new Slots(undefined);
    expect(slots.empty).toBe(true);
    slots.set('a', [1]);
    expect(slots.empty).toBe(false);
  });
});

describe('isSlots', () => {
  it('tells a wrapper from a bare state and from nothing', () => {
    expect(isSlots(new Slots([1]))).toBe(true);
    expect(isSlots([1, 2])).toBe(false);
    expect(isSlots(undefined)).toBe(false);
  });
});

describe('readSlot and writeSlot', () => {
  it('keep a primary-slot state bare', () => {
    expect(writeSlot(undefined, undefined, [1, 2])).toEqual([1, 2]);
    expect(readSlot([1, 2], undefined)).toEqual([1, 2]);
    expect(readSlot([1, 2], 'other')).toBeUndefined();
  });

  it('wrap a bare state in Slots when another slot is written, and unwrap nothing back', () => {
    const entry = writeSlot([1, 2], 'ns\u0000b', [7]);
    expect(isSlots(entry)).toBe(true);
    expect(readSlot(entry, undefined)).toEqual([1, 2]);
    expect(readSlot(entry, 'ns\u0000b')).toEqual([7]);
  });

  it('return undefined (delete the key) once every slot is cleared', () => {
    let entry = writeSlot([1, 2], 'b', [7]);
    entry = writeSlot(entry, undefined, undefined);
    expect(entry).not.toBeUndefined();
    expect(writeSlot(entry, 'b', undefined)).toBeUndefined();
  });
});

describe('copyOut and workingArrays', () => {
  it('copyOut returns a new array of the numbers at an offset', () => {
    const slab = Float64Array.from([9, 1, 2, 3, 9]);
    expect(copyOut(slab, 1, 3)).toEqual([1, 2, 3]);
  });

  it('workingArrays has an array of each state length 1 to 3 at its index', () => {
    const arrays = workingArrays();
    for (const length of [1, 2, 3]) expect(arrays[length]).toHaveLength(length);
  });
});
