/**
 * Deny lists (`enableProtection`), as `@upstash/ratelimit` 2.2.0 keeps them: values in
 * `<prefix>:denyList:all` (written by the Upstash console, by hand, or by the IP list refresh) are
 * refused with `reason: 'denyList'`; a value found there is then refused from a process-wide cache
 * for a minute without Redis; the IP list is downloaded again when its status key has expired.
 *
 * The functions take a {@link ScriptRunner}, so they work over `@upstash/redis` (HTTP), ioredis and
 * node-redis (TCP), on Upstash and open-source Redis 7.
 *
 * @module
 */
import { NOTHING_PENDING, numbers } from './algorithm-support.js';
import { denyListKeys } from './deny-list-keys.js';
import { downloadIpDenyList } from './ip-deny-list-feed.js';
import type { ScriptRunner } from './script-runner.js';
import { SCRIPTS } from './scripts.js';
import { isThreshold, ThresholdError } from './threshold-error.js';
import type { RatelimitResponse } from './types.js';

/** How long a value found in a deny list is refused from the cache, ms (the incumbent's minute). */
export const DENIED_VALUE_CACHE_MS = 60_000;
/** Past this many entries the cache is emptied before the next one is added (the incumbent's bound). */
const DENIED_VALUE_CACHE_LIMIT = 1000;

/** Denied value -> until when it is refused without Redis (epoch ms). Shared by every limiter of the process, as in the incumbent. */
const deniedValues = new Map<string, number>();

/** What the Redis check found: the denied value (the last of `members` found), and whether the IP list must be downloaded. */
export interface DenyListResult {
  deniedValue: string | undefined;
  invalidIpDenyList: boolean;
}

/** The values of a request the deny lists are checked for: the identifier, then `ip`, `userAgent`, `country`, those set (non-empty). */
export function deniableValues(identifier: string, req?: { ip?: string | undefined; userAgent?: string | undefined; country?: string | undefined }): string[] {
  return [identifier, req?.ip, req?.userAgent, req?.country].filter((value): value is string => typeof value === 'string' && value !== '');
}

/** The first of `members` the process-wide cache still refuses at `nowMs`, if any. */
export function cachedDeniedValue(members: readonly string[], nowMs: number): string | undefined {
  return members.find((member) => {
    const until = deniedValues.get(member);
    if (until === undefined) return false;
    if (until < nowMs) {
      deniedValues.delete(member);
      return false;
    }
    return true;
  });
}

function rememberDenied(member: string, nowMs: number): void {
  if (deniedValues.size > DENIED_VALUE_CACHE_LIMIT) deniedValues.clear();
  deniedValues.set(member, nowMs + DENIED_VALUE_CACHE_MS);
}

/** Empties the process-wide cache of denied values (for tests). */
export function forgetDeniedValues(): void {
  deniedValues.clear();
}

/**
 * Checks `members` against `<prefix>:denyList:all` in one script, which also claims the IP list
 * refresh (status `pending` for 30 s) when the status key is absent. Every member found is cached
 * as denied for a minute from `nowMs`.
 */
export async function checkDenyList(run: ScriptRunner, prefix: string, members: string[], nowMs: number): Promise<DenyListResult> {
  const keys = denyListKeys(prefix);
  const reply = await run(SCRIPTS.denyListCheck, [keys.all, keys.status], members);
  if (!Array.isArray(reply) || !Array.isArray(reply[0])) throw new TypeError(`Unexpected reply from Redis: ${JSON.stringify(reply)}`);
  const [found, statusTtl] = reply as [unknown[], unknown];
  let deniedValue: string | undefined;
  found.forEach((isMember, index) => {
    if (Number(isMember) !== 1) return;
    const member = members[index]!;
    rememberDenied(member, nowMs);
    deniedValue = member;
  });
  return { deniedValue, invalidIpDenyList: Number(statusTtl) === -2 };
}

/** The answer for a request refused from the cache, without Redis: the incumbent's `limit: 0, reset: 0`. */
export function cachedDenial(deniedValue: string): RatelimitResponse {
  return { success: false, limit: 0, remaining: 0, reset: 0, pending: NOTHING_PENDING, reason: 'denyList', deniedValue };
}

/**
 * Downloads level `threshold` of the IP feed and replaces `<prefix>:denyList:ipDenyList` with it in
 * one script; the status key becomes `valid` for `ttlMs`. Resolves with the incumbent's six MULTI
 * replies, numbers and `'OK'`.
 *
 * @throws {ThresholdError} (a rejection) for a threshold other than a number from 1 to 8
 * @throws {Error} `Failed to fetch ip deny list: ...` when the download fails
 */
export async function refreshIpDenyList(run: ScriptRunner, prefix: string, threshold: number, ttlMs: number): Promise<unknown> {
  if (!isThreshold(threshold)) throw new ThresholdError(threshold);
  const ips = await downloadIpDenyList(threshold);
  const keys = denyListKeys(prefix);
  const replies = await run(SCRIPTS.ipDenyListUpdate, [keys.all, keys.ipDenyList, keys.status], [String(Math.round(ttlMs)), ...ips]);
  return [...numbers(replies), 'OK'];
}

/** Removes the IP list from the deny lists and sets the status `disabled` (no refresh until an update). Resolves with the incumbent's three MULTI replies. */
export async function disableIpDenyListWith(run: ScriptRunner, prefix: string): Promise<unknown> {
  const keys = denyListKeys(prefix);
  const replies = await run(SCRIPTS.ipDenyListDisable, [keys.all, keys.ipDenyList, keys.status], []);
  return [...numbers(replies), 'OK'];
}
