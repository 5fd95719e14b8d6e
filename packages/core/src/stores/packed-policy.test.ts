import { resolveLimit } from '../limit';
import { Slots } from './entry';
import { admitPacked, MAX_PACKED_LIMITS, packable, PackedRecords, stateRoom } from './packed-policy';

const T0 = 1_700_000_000_000;
const perSecond = resolveLimit({ algorithm: 'gcra', limit: 10, windowMs: 1_000 }, 'limits[0]');
const perHour = resolveLimit({ algorithm: 'fixed-window', limit: 2, windowMs: 3_600_000 }, 'limits[1]');
const policy = [perSecond, perHour];

/** A record table holding `policy` for one key at slot 0: a GCRA state [tat] and a fixed window [start, used]. */
function records(tat: number, used: number): PackedRecords {
  const pack = new PackedRecords();
  pack.adopt('ns', policy, [undefined, 'ns\u0000hour'], 4);
  const slots = new Slots([tat]);
  slots.set('ns\u0000hour', [T0, used]);
  pack.write(0, slots, 4);
  return pack;
}

describe('stateRoom and packable', () => {
  it('gives each algorithm the numbers of its state without a block', () => {
    expect(['gcra', 'delay', 'fixed-window', 'token-bucket', 'sliding-window'].map((name) => stateRoom(name as never))).toEqual([1, 1, 2, 2, 3]);
  });

  it(`packs policies of at most ${MAX_PACKED_LIMITS} limits, none with a block`, () => {
    expect(packable(policy)).toBe(true);
    expect(packable(Array.from({ length: MAX_PACKED_LIMITS + 1 }, () => perSecond))).toBe(false);
    expect(packable([perSecond, resolveLimit({ limit: 1, windowMs: 1_000, blockDurationMs: 5_000 })])).toBe(false);
  });
});

describe('PackedRecords', () => {
  it('lays the policy out in one record per slot, and reads back the Slots it was given', () => {
    const pack = records(T0, 1);
    expect(pack.stride).toBe(3);
    expect(pack.offsets).toEqual([0, 1, 3]);
    const code = pack.codeOf(pack.read(0, 1 | (2 << 2)));
    expect(code).toBe(1 | (2 << 2));
    const back = pack.read(0, code);
    expect(back.primary).toEqual([T0]);
    expect(back.get('ns\u0000hour')).toEqual([T0, 1]);
  });

  it('refuses (-1) Slots that hold another set of states', () => {
    const pack = records(T0, 1);
    const slots = new Slots([T0]);
    expect(pack.codeOf(slots)).toBe(-1);
    slots.set('ns\u0000other', [T0, 1]);
    expect(pack.codeOf(slots)).toBe(-1);
  });

  it('grows its slab when a slot beyond it is written', () => {
    const pack = records(T0, 1);
    const slots = new Slots([T0]);
    slots.set('ns\u0000hour', [T0, 2]);
    pack.write(9, slots, 16);
    expect(pack.slab.length).toBe(16 * pack.stride);
    expect(pack.read(0, pack.policy!.code).get('ns\u0000hour')).toEqual([T0, 1]);
    expect(pack.read(9, pack.policy!.code).get('ns\u0000hour')).toEqual([T0, 2]);
  });
});

describe('admitPacked', () => {
  it('steps every limit in the record for an admitted consume, and returns their entries', () => {
    const pack = records(T0, 0);
    const entries = admitPacked(pack.slab, 0, pack.policy!.code, pack.policy!, policy, 1, T0);
    expect(entries?.map((entry) => [entry.name, entry.allowed, entry.remaining])).toEqual([
      [perSecond.name, true, 9],
      [perHour.name, true, 1],
    ]);
    expect(pack.read(0, pack.policy!.code).get('ns\u0000hour')).toEqual([T0, 1]);
  });

  it('leaves the record as it found it and answers undefined when a limit refuses', () => {
    const pack = records(T0, 2);
    const before = Array.from(pack.slab);
    expect(admitPacked(pack.slab, 0, pack.policy!.code, pack.policy!, policy, 1, T0)).toBeUndefined();
    expect(Array.from(pack.slab)).toEqual(before);
  });

  it("answers undefined for a record whose lengths code is not the policy's own", () => {
    const pack = records(T0, 0);
    expect(admitPacked(pack.slab, 0, pack.policy!.code + 1, pack.policy!, policy, 1, T0)).toBeUndefined();
  });
});
