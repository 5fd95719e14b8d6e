import type { AllOrNothingEntry, AllOrNothingParticipant } from './all-or-nothing.js';
import { admitsAll, isAllOrNothingParticipant, PROCESS_MEMORY_STORE } from './all-or-nothing.js';
import type { SyncCountStorage } from './memory-all-or-nothing.js';
import { consumeAllOrNothingInMemory, passInMemory } from './memory-all-or-nothing.js';

/** A fixed-window count storage on a clock the test moves. */
function fakeStorage(): SyncCountStorage & { records: Map<string, { value: number; expiresAt: number | null }> } {
  const records = new Map<string, { value: number; expiresAt: number | null }>();
  const live = (rlKey: string, nowMs: number) => {
    const record = records.get(rlKey);
    return record !== undefined && (record.expiresAt === null || record.expiresAt > nowMs) ? record : undefined;
  };
  const answer = (record: { value: number; expiresAt: number | null }, nowMs: number) => ({ consumedPoints: record.value, msBeforeNext: record.expiresAt === null ? -1 : record.expiresAt - nowMs });
  return {
    records,
    get: (rlKey, nowMs) => {
      const record = live(rlKey, nowMs);
      return record === undefined ? null : answer(record, nowMs);
    },
    incrby: (rlKey, points, secDuration, nowMs) => {
      let record = live(rlKey, nowMs);
      if (record === undefined) {
        record = { value: 0, expiresAt: secDuration > 0 ? nowMs + secDuration * 1000 : null };
        records.set(rlKey, record);
      }
      record.value += points;
      return answer(record, nowMs);
    },
  };
}

function memoryLimiter(storage: SyncCountStorage): AllOrNothingParticipant & { _memoryStorage: SyncCountStorage } {
  return { _memoryStorage: storage, _allOrNothingStore: PROCESS_MEMORY_STORE, _consumeAllOrNothing: (entries) => consumeAllOrNothingInMemory(entries, 0) };
}

const entry = (limiter: AllOrNothingParticipant, rlKey: string, points: number, limitPoints: number, msDuration = 1000): AllOrNothingEntry => ({ limiter, rlKey, points, msDuration, limitPoints });

describe('the all-or-nothing contract', () => {
  describe('isAllOrNothingParticipant', () => {
    it('is true for an object with _consumeAllOrNothing and an object _allOrNothingStore', () => {
      expect(isAllOrNothingParticipant(memoryLimiter(fakeStorage()))).toBe(true);
      expect(isAllOrNothingParticipant({ _consumeAllOrNothing: () => undefined })).toBe(false);
      expect(isAllOrNothingParticipant({ _consumeAllOrNothing: () => undefined, _allOrNothingStore: 'redis' })).toBe(false);
      expect(isAllOrNothingParticipant(null)).toBe(false);
    });
  });

  it('admitsAll refuses when any count after the charge exceeds its limit', () => {
    const limiter = memoryLimiter(fakeStorage());
    const entries = [entry(limiter, 'a', 1, 2), entry(limiter, 'b', 1, 5)];
    expect(admitsAll(entries, [2, 5])).toBe(true);
    expect(admitsAll(entries, [3, 1])).toBe(false);
    expect(admitsAll(entries, [1])).toBe(false);
  });
});

describe('the in-memory all-or-nothing pass', () => {
  it('charges every entry when all fit, as a lone consume would', () => {
    const [s1, s2] = [fakeStorage(), fakeStorage()];
    const answer = passInMemory([entry(memoryLimiter(s1), 'one:k', 2, 2, 1000), entry(memoryLimiter(s2), 'two:k', 2, 10, 60000)], 0);
    expect(answer).toEqual({
      admitted: true,
      outcomes: [
        { consumedPoints: 2, msBeforeNext: 1000 },
        { consumedPoints: 2, msBeforeNext: 60000 },
      ],
    });
    expect(s1.records.get('one:k')).toEqual({ value: 2, expiresAt: 1000 });
  });

  it('charges nothing when one entry would exceed its limit, answering what each would have held', () => {
    const [s1, s2] = [fakeStorage(), fakeStorage()];
    s1.incrby('one:k', 2, 1, 0);
    const answer = passInMemory([entry(memoryLimiter(s1), 'one:k', 1, 2, 1000), entry(memoryLimiter(s2), 'two:k', 1, 10, 0)], 400);
    expect(answer).toEqual({
      admitted: false,
      outcomes: [
        { consumedPoints: 3, msBeforeNext: 600 },
        { consumedPoints: 1, msBeforeNext: -1 },
      ],
    });
    expect(s1.records.get('one:k')?.value).toBe(2);
    expect(s2.records.size).toBe(0);
  });

  it('adds up the points of entries on the same storage and key', () => {
    const storage = fakeStorage();
    const limiter = memoryLimiter(storage);
    expect(passInMemory([entry(limiter, 'k', 2, 3), entry(limiter, 'k', 2, 3)], 0).admitted).toBe(false);
    expect(storage.records.size).toBe(0);
    expect(passInMemory([entry(limiter, 'k', 1, 3), entry(limiter, 'k', 2, 3)], 0)).toEqual({
      admitted: true,
      outcomes: [
        { consumedPoints: 1, msBeforeNext: 1000 },
        { consumedPoints: 3, msBeforeNext: 1000 },
      ],
    });
  });

  it('rejects, charging nothing, when an entry limiter has no memory storage', async () => {
    const storage = fakeStorage();
    const stranger = { _allOrNothingStore: PROCESS_MEMORY_STORE, _consumeAllOrNothing: (entries: readonly AllOrNothingEntry[]) => consumeAllOrNothingInMemory(entries, 0) };
    await expect(consumeAllOrNothingInMemory([entry(memoryLimiter(storage), 'k', 1, 5), entry(stranger, 'k', 1, 5)], 0)).rejects.toThrow(/no in-process memory storage/);
    expect(storage.records.size).toBe(0);
  });
});
