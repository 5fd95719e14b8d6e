/**
 * The all-or-nothing call (see all-or-nothing.ts) for in-process memory
 * limiters: RateLimiterMemory's `_consumeAllOrNothing`.
 *
 * Why it is atomic: it reads every entry's count, decides, and charges
 * every entry (or none) in one synchronous pass. A JS process runs one
 * step at a time, so no other consume, of any memory limiter, runs between
 * the check and the charge. That is why every memory limiter of the process
 * answers the one {@link PROCESS_MEMORY_STORE}: one pass covers them all.
 *
 * Each entry is charged exactly as a lone `consume` charges it (the
 * storage's own `incrby`, with the entry's window), so what is stored is
 * what rlf's memory limiter stores. Entries on the same storage and key (one
 * limiter passed twice) are checked with their points added together.
 *
 * @module
 */
import type { AllOrNothingAnswer, AllOrNothingEntry, AllOrNothingOutcome } from './all-or-nothing.js';
import { PROCESS_MEMORY_STORE } from './all-or-nothing.js';

export { PROCESS_MEMORY_STORE };

/** The synchronous storage calls the pass makes (memory-storage.ts: rlf's MemoryStorage `get` and `incrby`, at a given instant). */
export interface SyncCountStorage {
  /** The key's count and time left at `nowMs`, or null when it is missing or its window has ended. */
  get(rlKey: string, nowMs: number): { consumedPoints: number; msBeforeNext: number } | null;
  /** Adds `points` at `nowMs`, starting a window of `secDuration` seconds (0 = never expires) when the key is missing or ended. */
  incrby(rlKey: string, points: number, secDuration: number, nowMs: number): { consumedPoints: number; msBeforeNext: number };
}

/** A memory limiter, as the pass reaches its storage. */
export interface MemoryParticipant {
  readonly _memoryStorage: SyncCountStorage;
}

/**
 * Checks every entry and charges all of them, or none, in one synchronous
 * pass at `nowMs` (read once, by the limiter the union called: every
 * storage is read and written at that one instant, so no window can end
 * between the check and the charge). Each entry's `limiter` must be a
 * memory limiter (a {@link MemoryParticipant}).
 *
 * Resolves with the answer; rejects with an Error when an entry's limiter
 * has no memory storage (nothing is charged then).
 */
export function consumeAllOrNothingInMemory(entries: readonly AllOrNothingEntry[], nowMs: number): Promise<AllOrNothingAnswer> {
  try {
    return Promise.resolve(passInMemory(entries, nowMs));
  } catch (err) {
    return Promise.reject(err);
  }
}

/** The synchronous pass at `nowMs`: read, decide, then charge all or none. */
export function passInMemory(entries: readonly AllOrNothingEntry[], nowMs: number): AllOrNothingAnswer {
  const storages = entries.map((entry) => storageOf(entry));
  // Points already asked of a (storage, key) earlier in this call, so a repeated key is checked with its points added together.
  const asked = new Map<SyncCountStorage, Map<string, number>>();
  const wouldBe: AllOrNothingOutcome[] = entries.map((entry, i) => {
    const storage = storages[i] as SyncCountStorage;
    const current = storage.get(entry.rlKey, nowMs);
    let keys = asked.get(storage);
    if (keys === undefined) {
      keys = new Map();
      asked.set(storage, keys);
    }
    const before = (keys.get(entry.rlKey) ?? 0) + (current === null ? 0 : current.consumedPoints);
    keys.set(entry.rlKey, (keys.get(entry.rlKey) ?? 0) + entry.points);
    const msBeforeNext = current === null ? (entry.msDuration > 0 ? entry.msDuration : -1) : current.msBeforeNext;
    return { consumedPoints: before + entry.points, msBeforeNext };
  });
  const admitted = entries.every((entry, i) => (wouldBe[i] as AllOrNothingOutcome).consumedPoints <= entry.limitPoints);
  if (!admitted) return { admitted, outcomes: wouldBe };
  const outcomes = entries.map((entry, i): AllOrNothingOutcome => {
    const res = (storages[i] as SyncCountStorage).incrby(entry.rlKey, entry.points, entry.msDuration / 1000, nowMs);
    return { consumedPoints: res.consumedPoints, msBeforeNext: res.msBeforeNext };
  });
  return { admitted, outcomes };
}

function storageOf(entry: AllOrNothingEntry): SyncCountStorage {
  const storage = (entry.limiter as Partial<MemoryParticipant>)._memoryStorage;
  if (storage === undefined || typeof storage.get !== 'function' || typeof storage.incrby !== 'function') {
    throw new Error(`RateLimiterUnion (allOrNothing): the limiter of key ${JSON.stringify(entry.rlKey)} has no in-process memory storage to charge in the same pass`);
  }
  return storage;
}
