import { resolveLimit } from '../limit';
import { LimitSlots } from './limit-slots';

const perSecond = resolveLimit({ limit: 5, windowMs: 1_000 });
const perHour = resolveLimit({ limit: 100, windowMs: 3_600_000 });

describe('LimitSlots', () => {
  it('gives the primary slot to the first (namespace, limit) it sees, and to nothing else', () => {
    const slots = new LimitSlots();
    expect(slots.slotOf('api', perSecond)).toBeUndefined();
    expect(slots.isPrimary('api', perSecond)).toBe(true);
    expect(slots.isPrimary('web', perSecond)).toBe(false);
    expect(slots.isPrimary('api', perHour)).toBe(false);
    expect(slots.primary).toBe(perSecond);
  });

  it('names every other slot by namespace and limit id, never by key, and remembers its limit', () => {
    const slots = new LimitSlots();
    slots.slotOf('api', perSecond);
    const id = slots.slotOf('api', perHour);
    expect(id).toBe(`api\u0000${perHour.id}`);
    expect(slots.bySlot.get(id!)).toBe(perHour);
    expect(slots.slotOf('web', perHour)).toBe(`web\u0000${perHour.id}`);
  });

  it('answers the same policy with the same slot ids, in order', () => {
    const slots = new LimitSlots();
    const policy = [perSecond, perHour];
    const ids = slots.slotIdsOf('api', policy);
    expect(ids).toEqual([undefined, `api\u0000${perHour.id}`]);
    expect(slots.slotIdsOf('api', policy)).toBe(ids);
    expect(slots.slotIdsOf('web', policy)).toEqual([`web\u0000${perSecond.id}`, `web\u0000${perHour.id}`]);
  });

  it('lists the limits seen in a namespace, the primary first', () => {
    const slots = new LimitSlots();
    slots.slotIdsOf('api', [perSecond, perHour]);
    slots.slotOf('web', perHour);
    expect(slots.knownLimits('api')).toEqual([perSecond, perHour]);
    expect(slots.knownLimits('web')).toEqual([perHour]);
    expect(slots.knownLimits('other')).toEqual([]);
  });
});
