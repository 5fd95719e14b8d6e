/**
 * RateLimiterUnion: one consume over several limiters, as rlf's
 * `lib/RateLimiterUnion.js`, plus an opt-in all-or-nothing mode.
 *
 * By default it is rlf's union exactly: every limiter consumes in parallel
 * and independently; the union resolves with every limiter's RateLimiterRes
 * keyed by its keyPrefix, or, when any limiter refuses or fails, rejects
 * with an object holding only the refusing limiters' RateLimiterRes and the
 * failing limiters' Errors, keyed the same way. The limiters that admitted
 * keep what they charged (rlf #150, #280). Limiters sharing a keyPrefix
 * share one entry: the later limiter's answer replaces the earlier one's.
 *
 * All-or-nothing (a trailing options object `{ allOrNothing: true }`, which
 * rlf's constructor would reject as a limiter, so no rlf program passes it):
 * a request is charged to every limiter or to none. Every limiter must take
 * part in one atomic store call (see all-or-nothing.ts: every memory limiter
 * in the process, or store limiters on one client); the union sends all
 * their keys in that one call, which checks every limit and charges them all
 * only when every one admits. So a refusal charges nothing, and the union
 * never admits more than any limiter's `points` per window. The result and
 * rejection objects have rlf's shape; a refusing limiter's RateLimiterRes
 * reports the points it would have held (`consumedPoints`, so
 * `remainingPoints` 0) and its key's `msBeforeNext`, as rlf's refusal does,
 * though nothing was written. Limiters whose refusal writes (blockDuration,
 * inMemoryBlockDuration) or whose admission waits (execEvenly) are refused
 * when the union is built, with the reason: an all-or-nothing refusal writes
 * nothing, so it could not block. A store failure puts its Error under
 * every limiter's prefix (one call failed for all); when every limiter has
 * an `insuranceLimiter` and those take part in one call together, the same
 * all-or-nothing consume is made on them instead, as rlf's limiters fall back
 * one by one.
 *
 * @module
 */
/* eslint-disable @typescript-eslint/only-throw-error, @typescript-eslint/prefer-promise-reject-errors -- rlf's contract: a union rejects with a plain object keyed by keyPrefix, never with a bare Error */
import { RateKitOptionError } from '@ratekit/core';
import { isAllOrNothingParticipant } from './all-or-nothing.js';
import type { AllOrNothingAnswer, AllOrNothingEntry, AllOrNothingOutcome, AllOrNothingParticipant } from './all-or-nothing.js';
import { isRateLimiterCompatible } from './compatible-abstract.js';
import type { RateLimiterLike } from './options.js';
import { RateLimiterRes } from './rate-limiter-res.js';

/** The options a union takes after its limiters (a ratekit extension). */
export interface RateLimiterUnionOptions {
  /**
   * Charge every limiter or none: one atomic store call checks and charges
   * all of them. Default false (rlf's union: each limiter charged on its own).
   */
  allOrNothing?: boolean;
}

/** What a union resolves with (every limiter) or rejects with (the refusing and failing ones), keyed by keyPrefix. */
export type RateLimiterUnionResult = Record<string, RateLimiterRes>;

/**
 * What a union rejects with: the refusing limiters' RateLimiterRes, and the
 * failing ones' Errors, keyed by keyPrefix (rlf's types call it a
 * `Record<string, RateLimiterRes>`; its Errors are there too).
 */
export type RateLimiterUnionRejection = Record<string, RateLimiterRes | Error>;

/**
 * True when `rejection` is what a RateLimiterUnion rejects with: a plain
 * object whose every value is a RateLimiterRes or an Error (rlf #279). A
 * RateLimiterRes or an Error itself is not.
 *
 * @example
 * ```ts
 * try {
 *   await union.consume(ip);
 * } catch (rejection) {
 *   if (isRateLimiterUnionRejection(rejection)) {
 *     const waits = Object.values(rejection).filter((r) => r instanceof RateLimiterRes).map((r) => r.msBeforeNext);
 *     res.set('Retry-After', String(Math.ceil(Math.max(...waits) / 1000)));
 *   }
 * }
 * ```
 */
export function isRateLimiterUnionRejection(rejection: unknown): rejection is RateLimiterUnionRejection {
  if (typeof rejection !== 'object' || rejection === null) return false;
  const proto = Object.getPrototypeOf(rejection) as unknown;
  if (proto !== Object.prototype && proto !== null) return false;
  return Object.values(rejection).every((value) => value instanceof RateLimiterRes || value instanceof Error);
}

/**
 * Consumes from several limiters at once.
 *
 * @throws {Error} "RateLimiterUnion: at least one limiter have to be passed";
 *   "RateLimiterUnion: all limiters have to be instance of RateLimiterAbstract or RateLimiterCompatibleAbstract"
 *   (rlf's messages).
 * @throws {RateKitOptionError} (`ERR_RATEKIT_INVALID_OPTION`) for a bad
 *   options object, or, with `allOrNothing`, a limiter that cannot take part
 *   in one atomic call with the others (and why).
 *
 * @example
 * ```ts
 * const perSecond = new RateLimiterMemory({ keyPrefix: 'second', points: 5, duration: 1 });
 * const perMinute = new RateLimiterMemory({ keyPrefix: 'minute', points: 100, duration: 60 });
 * const union = new RateLimiterUnion(perSecond, perMinute, { allOrNothing: true });
 * const res = await union.consume(ip); // { second: RateLimiterRes, minute: RateLimiterRes }
 * ```
 */
export class RateLimiterUnion {
  readonly _limiters: RateLimiterLike[];
  readonly _allOrNothing: boolean;

  constructor(...limitersAndOptions: RateLimiterLike[] | [...RateLimiterLike[], RateLimiterUnionOptions]) {
    const args = limitersAndOptions as unknown[];
    const options = isUnionOptions(args[args.length - 1]) ? (args.pop() as RateLimiterUnionOptions) : {};
    const limiters = args as RateLimiterLike[];
    if (limiters.length < 1) throw new Error('RateLimiterUnion: at least one limiter have to be passed');
    for (const limiter of limiters) {
      if (!isRateLimiterCompatible(limiter)) {
        throw new Error('RateLimiterUnion: all limiters have to be instance of RateLimiterAbstract or RateLimiterCompatibleAbstract');
      }
    }
    this._allOrNothing = resolveAllOrNothing(options);
    if (this._allOrNothing) {
      assertOneAtomicCall(limiters, 'limiters');
      for (const [i, limiter] of limiters.entries()) {
        const reason = cannotJoinAllOrNothing(limiter);
        if (reason !== undefined) throw new RateKitOptionError(`limiters[${i}]`, reason, limiter);
      }
    }
    this._limiters = limiters;
  }

  /**
   * Consumes `points` (default 1) for `key` from every limiter.
   *
   * Resolves with `{ [keyPrefix]: RateLimiterRes }` for every limiter; rejects
   * with `{ [keyPrefix]: RateLimiterRes | Error }` for the limiters that
   * refused or failed (never with a bare Error). See the module notes for
   * what is charged on a refusal.
   */
  consume(key: string | number, points = 1): Promise<RateLimiterUnionResult> {
    return this._allOrNothing ? this.consumeAllOrNothing(key, points) : this.consumeEach(key, points);
  }

  /** rlf's union: every limiter consumes on its own; admissions are kept when another limiter refuses. */
  private consumeEach(key: string | number, points: number): Promise<RateLimiterUnionResult> {
    const answers = this._limiters.map((limiter) =>
      callSafely(() => limiter.consume(key, points)).then(
        (res) => ({ refused: false, value: res as RateLimiterRes | Error }),
        (rejection: unknown) => ({ refused: true, value: rejection as RateLimiterRes | Error }),
      ),
    );
    return Promise.all(answers).then((settled) => {
      const refused = settled.some((answer) => answer.refused);
      const result: RateLimiterUnionRejection = {};
      settled.forEach((answer, i) => {
        if (answer.refused || !refused) result[(this._limiters[i] as RateLimiterLike).keyPrefix] = answer.value;
      });
      if (refused) throw result;
      return result as RateLimiterUnionResult;
    });
  }

  /** One atomic call over every limiter's key: all charged, or none. */
  private consumeAllOrNothing(key: string | number, points: number): Promise<RateLimiterUnionResult> {
    const limiters = this._limiters;
    const failures: RateLimiterUnionRejection = {};
    limiters.forEach((limiter, i) => {
      // The options are mutable; one changed since construction is refused here, with nothing charged.
      const reason = cannotJoinAllOrNothing(limiter);
      if (reason !== undefined) failures[limiter.keyPrefix] = new RateKitOptionError(`limiters[${i}]`, reason, limiter);
    });
    if (Object.keys(failures).length > 0) return Promise.reject(failures);

    const participants = limiters as unknown as AllOrNothingLimiter[];
    return runAllOrNothing(participants, key, points).then(
      ({ entries, answer }) => answerOf(limiters, entries, answer),
      (err: unknown) => {
        const insurance = insuranceOf(participants);
        if (insurance === undefined) throw everyPrefix(limiters, err);
        return runAllOrNothing(insurance, key, points).then(
          ({ entries, answer }) => answerOf(limiters, entries, answer),
          (insuranceErr: unknown) => {
            throw everyPrefix(limiters, insuranceErr);
          },
        );
      },
    );
  }
}

/** A limiter taking part in an all-or-nothing union, with the fields the union reads. */
type AllOrNothingLimiter = AllOrNothingParticipant & {
  readonly keyPrefix: string;
  readonly points: number;
  readonly duration: number;
  readonly blockDuration: number;
  readonly execEvenly: boolean;
  readonly inMemoryBlockDuration?: number;
  readonly insuranceLimiter?: unknown;
  getKey(key: string | number): string;
};

/** True for a trailing options object: a plain object with an own `allOrNothing` (so rlf's `{}` is still refused as a limiter). */
function isUnionOptions(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || isRateLimiterCompatible(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return (proto === Object.prototype || proto === null) && Object.prototype.hasOwnProperty.call(value, 'allOrNothing');
}

function resolveAllOrNothing(options: RateLimiterUnionOptions): boolean {
  for (const name of Object.keys(options)) {
    if (name !== 'allOrNothing') throw new RateKitOptionError(`options.${name}`, 'not set: RateLimiterUnion takes only `allOrNothing`', (options as Record<string, unknown>)[name]);
  }
  const { allOrNothing } = options;
  if (allOrNothing === undefined) return false;
  if (typeof allOrNothing !== 'boolean') throw new RateKitOptionError('options.allOrNothing', 'a boolean', allOrNothing);
  return allOrNothing;
}

/** Throws unless every limiter implements the all-or-nothing contract on one store. */
function assertOneAtomicCall(limiters: readonly unknown[], name: string): void {
  limiters.forEach((limiter, i) => {
    if (!isAllOrNothingParticipant(limiter)) {
      throw new RateKitOptionError(
        `${name}[${i}]`,
        'a limiter that can be charged in one atomic call with the others (RateLimiterMemory, or RateLimiterRedis) for `allOrNothing: true`; this one cannot, so the union could not leave it uncharged when another limiter refuses',
        limiter,
      );
    }
  });
  const store = (limiters[0] as AllOrNothingParticipant)._allOrNothingStore;
  limiters.forEach((limiter, i) => {
    if ((limiter as AllOrNothingParticipant)._allOrNothingStore !== store) {
      throw new RateKitOptionError(
        `${name}[${i}]`,
        `a limiter on the same store as ${name}[0] for \`allOrNothing: true\` (all in-process memory limiters, or store limiters on one client): charging two stores and refunding one when the other refuses would let other requests see, and be refused by, the charge before its refund, and a failed or late refund would leave a wrong count`,
        limiter,
      );
    }
  });
}

/** Why a limiter cannot be charged all-or-nothing now, or undefined when it can. */
function cannotJoinAllOrNothing(limiter: RateLimiterLike): string | undefined {
  const { blockDuration, execEvenly, inMemoryBlockDuration } = limiter as unknown as AllOrNothingLimiter;
  const why = 'for `allOrNothing: true`: an all-or-nothing refusal writes nothing';
  if (blockDuration > 0) return `a limiter without blockDuration ${why}, so it could not block the key as blockDuration does`;
  if (inMemoryBlockDuration !== undefined && inMemoryBlockDuration > 0) return `a limiter without inMemoryBlockDuration ${why}, so it could not block the key in memory as inMemoryBlockDuration does`;
  if (execEvenly) return 'a limiter without execEvenly for `allOrNothing: true`: the union answers at once for all its limiters, so it cannot delay one of them';
  return undefined;
}

/** The entries of one all-or-nothing call, and the participant's answer. */
function runAllOrNothing(limiters: readonly AllOrNothingLimiter[], key: string | number, points: number): Promise<{ entries: AllOrNothingEntry[]; answer: AllOrNothingAnswer }> {
  const entries = limiters.map((limiter): AllOrNothingEntry => ({ limiter, rlKey: limiter.getKey(key), points, msDuration: limiter.duration * 1000, limitPoints: limiter.points }));
  const first = limiters[0] as AllOrNothingLimiter;
  return callSafely(() => first._consumeAllOrNothing(entries)).then((answer) => {
    // A malformed answer is the store's failure: it rejects here, to be placed under every prefix (never a bare Error).
    if (answer.outcomes.length !== entries.length) {
      throw new Error(`RateLimiterUnion: the all-or-nothing store call answered ${answer.outcomes.length} outcomes for ${entries.length} keys`);
    }
    return { entries, answer };
  });
}

/** The union's answer: every limiter's result when admitted, else the refusing ones'. Keyed by the union's own limiters' prefixes. */
function answerOf(limiters: readonly RateLimiterLike[], entries: readonly AllOrNothingEntry[], answer: AllOrNothingAnswer): RateLimiterUnionResult {
  const result: RateLimiterUnionResult = {};
  entries.forEach((entry, i) => {
    const outcome = answer.outcomes[i] as AllOrNothingOutcome; // as many as entries: checked by runAllOrNothing
    const refused = outcome.consumedPoints > entry.limitPoints;
    if (answer.admitted || refused) {
      const remainingPoints = Math.max(entry.limitPoints - outcome.consumedPoints, 0);
      result[(limiters[i] as RateLimiterLike).keyPrefix] = new RateLimiterRes(remainingPoints, outcome.msBeforeNext, outcome.consumedPoints, outcome.consumedPoints === entry.points);
    }
  });
  if (!answer.admitted) throw result;
  return result;
}

/** The insurance limiters, when every limiter has one and they can share one all-or-nothing call; else undefined. */
function insuranceOf(limiters: readonly AllOrNothingLimiter[]): AllOrNothingLimiter[] | undefined {
  const insurance = limiters.map((limiter) => limiter.insuranceLimiter);
  if (!insurance.every((limiter) => isAllOrNothingParticipant(limiter) && cannotJoinAllOrNothing(limiter as unknown as RateLimiterLike) === undefined)) return undefined;
  const store = (insurance[0] as AllOrNothingParticipant)._allOrNothingStore;
  if (!insurance.every((limiter) => (limiter as AllOrNothingParticipant)._allOrNothingStore === store)) return undefined;
  return insurance as AllOrNothingLimiter[];
}

/** A store failure of the one call, under every limiter's prefix (rlf puts a limiter's Error under its prefix). */
function everyPrefix(limiters: readonly RateLimiterLike[], err: unknown): RateLimiterUnionRejection {
  const error = err instanceof Error ? err : new Error(String(err));
  const rejection: RateLimiterUnionRejection = {};
  for (const limiter of limiters) rejection[limiter.keyPrefix] = error;
  return rejection;
}

/** Runs a call that should return a promise; a synchronous throw becomes its rejection. */
function callSafely<T>(call: () => Promise<T>): Promise<T> {
  try {
    return call();
  } catch (err) {
    return Promise.reject(err);
  }
}
