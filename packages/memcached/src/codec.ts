import type { LimitState } from '@ratekit/core';
import { MemcachedError } from './client.js';

/**
 * What the store's items hold, and how long they live.
 *
 * A window counter holds a window's start and its count. Memcached can only
 * increment a decimal unsigned 64-bit number, so when both are whole numbers
 * that fit, the counter is that one number,
 *
 *     startMs × 2²² + count        (startMs < 2⁴², i.e. before the year 2109; count < 2²¹),
 *
 * and `ma` adds a cost to the count in place, atomically. Anything else (a
 * fractional count or start, a count of 2²¹ or more) is kept as text,
 * `w<startMs>:<count>`, which `ma` refuses as non-numeric, and the store then
 * updates it with compare-and-set instead.
 *
 * The top bit of the count (2²¹ up to 2²²) is headroom: `ma` increments
 * refused requests before they are taken back, and the store only uses `ma`
 * for limits below 2²⁰ and costs up to 1,024, so the count overflows into the
 * start only if more than 2²¹ units of refused increments are in flight on
 * one key at the same instant.
 */

/** The content of a window counter. */
export interface WindowCount {
  readonly startMs: number;
  readonly count: number;
}

const COUNT_BITS = 22n;
const COUNT_MASK = (1n << COUNT_BITS) - 1n;
/** Starts at or above this (2⁴² ms, the year 2109) are stored as text. */
export const MAX_NUMERIC_START = 2 ** 42;
/** Counts at or above this are stored as text; the rest of the count field is headroom for increments in flight. */
export const MAX_NUMERIC_COUNT = 2 ** 21;

/** Encodes a counter: a number when both parts are whole and fit, else text. Does not mutate. */
export function encodeWindow(window: WindowCount): string {
  const { startMs, count } = window;
  if (Number.isSafeInteger(startMs) && startMs >= 0 && startMs < MAX_NUMERIC_START && Number.isSafeInteger(count) && count >= 0 && count < MAX_NUMERIC_COUNT) {
    return ((BigInt(startMs) << COUNT_BITS) + BigInt(count)).toString();
  }
  return `w${startMs}:${count}`;
}

/**
 * Decodes a counter. Memcached pads a decremented number with trailing
 * spaces, which are ignored.
 *
 * @throws {MemcachedError} `ERR_MEMCACHED_VALUE` when the text is neither form.
 */
export function decodeWindow(text: string, key: string): WindowCount {
  const trimmed = text.trimEnd();
  if (/^\d{1,20}$/.test(trimmed)) {
    const value = BigInt(trimmed);
    return { startMs: Number(value >> COUNT_BITS), count: Number(value & COUNT_MASK) };
  }
  const match = /^w([^:]+):(.+)$/.exec(trimmed);
  const startMs = Number(match?.[1]);
  const count = Number(match?.[2]);
  if (match === null || !Number.isFinite(startMs) || !Number.isFinite(count)) throw badValue(key, text);
  return { startMs, count };
}

/** True when two counter contents (or absences) are the same. */
export function sameWindow(a: WindowCount | undefined, b: WindowCount | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.startMs === b.startMs && a.count === b.count;
}

/** One compare-and-set state in the bucket item, with the caller-clock time it expires. */
export interface BucketEntry {
  readonly expiresAtMs: number;
  readonly state: LimitState;
}

/**
 * Encodes the bucket item: JSON, `{"<limit id>": [expiresAtMs, ...state]}`.
 * JSON numbers carry doubles exactly, so fractional tokens and times survive.
 */
export function encodeBucket(entries: ReadonlyMap<string, BucketEntry>): string {
  const object: Record<string, number[]> = {};
  for (const [id, entry] of entries) object[id] = [entry.expiresAtMs, ...entry.state];
  return JSON.stringify(object);
}

/** @throws {MemcachedError} `ERR_MEMCACHED_VALUE` when the text is not a bucket item. */
export function decodeBucket(text: string, key: string): Map<string, BucketEntry> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw badValue(key, text);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw badValue(key, text);
  const entries = new Map<string, BucketEntry>();
  for (const [id, value] of Object.entries(parsed)) {
    if (!Array.isArray(value) || value.length === 0 || !value.every((n) => typeof n === 'number')) throw badValue(key, text);
    entries.set(id, { expiresAtMs: value[0] as number, state: value.slice(1) });
  }
  return entries;
}

/** The longest TTL the store sets, ten years: states that would need longer are cut short (they are idle that long anyway). */
const MAX_TTL_MS = 10 * 365 * 86_400_000;
/** The longest relative TTL Memcached takes; longer ones are read as Unix times. */
const MAX_RELATIVE_TTL_S = 30 * 24 * 3600;

/**
 * The Memcached TTL, in seconds, for an item that must live `ms` more
 * milliseconds: rounded up, plus one second because Memcached's clock ticks
 * once a second (an item can expire up to a second early), so at least 1
 * (0 would mean "never"). Beyond 30 days Memcached reads the TTL as a Unix
 * time, so it is sent as one, from this process's clock.
 */
export function ttlSeconds(ms: number): number {
  const bounded = Number.isNaN(ms) ? 0 : Math.max(0, Math.min(ms, MAX_TTL_MS));
  const seconds = Math.ceil(bounded / 1_000) + 1;
  return seconds <= MAX_RELATIVE_TTL_S ? seconds : Math.floor(Date.now() / 1_000) + seconds;
}

function badValue(key: string, text: string): MemcachedError {
  const shown = text.length > 60 ? `${text.slice(0, 60)}…` : text;
  return new MemcachedError('ERR_MEMCACHED_VALUE', `The item ${key} holds ${JSON.stringify(shown)}, which this store did not write (is another application using the same key prefix?)`);
}
