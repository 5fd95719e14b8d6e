/**
 * The gate: the one request pipeline every adapter's ratekit mode stands on. Per request:
 * `skip` → key (`keyGenerator`, or the client address past `trustProxy`, grouped by `ipv6Subnet`)
 * → one decision of a core limiter → the header list, with the key as draft-8's partition key.
 * A refusal's body is `message` (or express-rate-limit's default) with `statusCode`; a pass the
 * `delay` algorithm admits late is held (`holdFor`, abort-aware) and shows its wait in
 * `X-Slow-Down-Delay`; `onDecision`'s work goes to the runtime's `waitUntil` or is awaited
 * (`inBackground`).
 *
 * An adapter supplies only what its framework differs in: where the client address and
 * `X-Forwarded-For` are, how a header is set, how the refusal is sent, where background work goes.
 *
 * The path is plain functions returning a value or a Promise, not `async` functions: with the
 * memory store, a synchronous key and no `skip`, nothing is awaited, so a request costs no
 * microtask turn for the limiter (each `await` of a plain value would cost one).
 *
 * @module
 */
import type { Decision } from '../decision.js';
import { RateKitError } from '../errors.js';
import { DEFAULT_REFUSAL_MESSAGE } from '../headers/index.js';
import type { HeaderList } from '../headers/options.js';
import { ipKeyGenerator } from '../keys.js';
import { consumeInAnyForm, createLimiter, type Limiter } from '../limiter.js';
import { clientAddress } from '../proxy-chain.js';
import type { MaybePromise } from '../stores/types.js';
import { inBackground, type WaitUntil } from './background.js';
import { keyedHeaderList } from './header-list.js';
import { type GateAdapterSpec, type GateOptions, type KeyResult, type MessageBody, resolveGateOptions, withOptionNames } from './options.js';

/** The header that shows how long a pass was held by the `delay` algorithm, in ms (as express-slow-down's adapters do). */
export const DELAY_HEADER = 'X-Slow-Down-Delay';

/** What the adapter tells the gate about its framework. */
export interface GateAdapter<TContext> extends GateAdapterSpec {
  /** The request's `X-Forwarded-For`, read only when `trustProxy` names proxies. */
  forwardedFor(context: TContext): string | null | undefined;
}

/** A request the gate let through unlimited: `skip` said so, or `keyGenerator` returned `false`. No headers. */
export interface GateUnlimited {
  readonly key: undefined;
  readonly decision: undefined;
  readonly headers: undefined;
}

/** A request the limiter decided. */
export interface GateDecided {
  readonly key: string;
  readonly decision: Decision;
  /** The fields to set, on a pass and a refusal alike (with `Retry-After` on a refusal, and `X-Slow-Down-Delay` on a held pass); empty when the headers are off. */
  readonly headers: Readonly<HeaderList>;
}

/** What {@link Gate.decide} resolves to. */
export type GateOutcome = GateUnlimited | GateDecided;

/** One adapter's pipeline, built once by {@link createGate}. */
export interface Gate<TContext> {
  /** The limiter behind it: `peek`, `refund`, `reset` by hand. */
  readonly limiter: Limiter<TContext>;
  /** The refusal status, 400–599. */
  readonly statusCode: number;
  /** True when the default key is used, so the request's client address is needed. */
  readonly needsAddress: boolean;
  /** True when the limiter reads the context (`limits` or `cost` is a function). */
  readonly needsContext: boolean;
  /**
   * Runs `skip`, the key and one decision. Returns a value when nothing had to be awaited; never
   * throws synchronously (a failure is a rejected Promise).
   * @throws {RateKitError} `ERR_RATEKIT_KEY` when the key cannot be had; `ERR_RATEKIT_STORE` when
   * the store fails under `onStoreError: 'throw'`; a throwing `skip`, `limits` or `cost` with its own error
   */
  decide(context: TContext, address: string | undefined): MaybePromise<GateOutcome>;
  /**
   * The key step of {@link Gate.decide} alone, for an adapter that acts on the key before the
   * decision (an allow list of keys, a per-key limit, a peek): `false` means unlimited. Never throws
   * synchronously. @throws {RateKitError} `ERR_RATEKIT_KEY`, as `decide`
   */
  key(context: TContext, address: string | undefined): MaybePromise<KeyResult>;
  /** The decision step of {@link Gate.decide} alone, for a key {@link Gate.key} gave. Never throws synchronously. */
  decideFor(context: TContext, key: KeyResult): MaybePromise<GateOutcome>;
  /** The refusal body: `message`, its function's result, or express-rate-limit's default text. */
  refusalBody(context: TContext, decision: Decision): MaybePromise<MessageBody>;
  /**
   * Runs `onDecision`: returns what to await before the request goes on (nothing when there is no
   * hook, when it returned no Promise, or when its work went to `waitUntil`). Failures go to `onError`.
   */
  observe(outcome: GateDecided, context: TContext, waitUntil: WaitUntil | undefined): Promise<void> | undefined;
  /** Reports background failures (`onError`, default `console.error`), wrapped as a `RateKitError` when they are not one. */
  readonly report: (error: unknown) => void;
  /**
   * Writes an outcome's fields through the framework: each with `set`, but the draft-8+ list
   * fields (`RateLimit`, `RateLimit-Policy`) with `append` when it is given and the standard
   * headers are draft-8 or later, so middlewares stacked on one response each add their policy
   * instead of replacing the other's (the drafts' fields are RFC 9110 lists). Synchronous; never throws by itself.
   *
   * @param headers - an outcome's `headers` (or a list made from them, e.g. renamed)
   * @param target - what `set` and `append` write to (a context, a response), handed to them as
   *   is, so they can be made once rather than per request
   * @param set - sets a field, replacing one of the same name
   * @param append - adds a field value; without it, every field is `set`
   * @example
   * ```ts
   * gate.writeHeaders(outcome.headers, res, (r, name, value) => r.setHeader(name, value), (r, name, value) => r.appendHeader(name, value));
   * ```
   */
  writeHeaders<T>(headers: Readonly<HeaderList>, target: T, set: FieldWriter<T>, append?: FieldWriter<T>): void;
}

/** Writes one field on `target` (see {@link Gate.writeHeaders}). */
export type FieldWriter<T> = (target: T, name: string, value: string) => void;

/** True for the draft-8+ fields that are lists (`RateLimit`, `RateLimit-Policy`), in any case. */
function isListField(name: string): boolean {
  const lower = name.toLowerCase();
  return lower === 'ratelimit' || lower === 'ratelimit-policy';
}

/**
 * Builds an adapter's pipeline from its options.
 *
 * @param options - the shared ratekit-mode options ({@link GateOptions}); the adapter's own are ignored here
 * @param adapter - the adapter's name, extra option names, defaults and `X-Forwarded-For` reader
 * @throws {RateKitOptionError} (code `ERR_RATEKIT_INVALID_OPTION`) naming the first bad option
 * @example
 * ```ts
 * const gate = createGate<Request>({ limit: 100 }, { name: 'rateLimit()', standardHeaders: 'draft-8', forwardedFor: (r) => r.headers.get('x-forwarded-for') });
 * const outcome = await gate.decide(request, '203.0.113.7');
 * if (outcome.decision?.allowed === false) return new Response(String(await gate.refusalBody(request, outcome.decision)), { status: gate.statusCode, headers: outcome.headers });
 * ```
 */
export function createGate<TContext, TAnswer = unknown>(options: GateOptions<TContext, TAnswer>, adapter: GateAdapter<TContext>): Gate<TContext> {
  const { resolved, limiter } = withOptionNames(adapter.optionNames, () => {
    const checked = resolveGateOptions(options, adapter);
    // createLimiter checks limits, cost, store, prefix, onStoreError, storeTimeoutMs, now and refusalCache, and names the option.
    const built = createLimiter<TContext>({
      limits: checked.limits,
      cost: options.cost,
      store: options.store,
      prefix: options.prefix,
      now: options.now,
      onStoreError: options.onStoreError,
      storeTimeoutMs: options.storeTimeoutMs,
      onError: options.onError,
      refusalCache: options.refusalCache,
    });
    return { resolved: checked, limiter: built };
  });
  const { trustProxy, ipv6Subnet } = resolved;
  const { skip, keyGenerator, message, onDecision } = options;
  const onError = options.onError ?? ((error: RateKitError) => console.error(error));
  const keyOption = adapter.keyOption ?? 'keyGenerator';
  // A cached refusal comes back as a value, not a Promise.
  const consume = consumeInAnyForm(limiter);
  const needsContext = typeof options.limits === 'function' || typeof options.cost === 'function';
  const headersOf = keyedHeaderList(resolved.headerOptions);
  const noHeaders: Readonly<HeaderList> = Object.freeze([]);
  const unlimited: GateUnlimited = Object.freeze({ key: undefined, decision: undefined, headers: undefined });
  const standard = resolved.headerOptions.standardHeaders;
  // draft-6 and draft-7 fields are single values; from draft-8, RateLimit and RateLimit-Policy are lists.
  const appendsLists = standard !== false && standard !== 'draft-6' && standard !== 'draft-7';

  function report(error: unknown): void {
    onError(
      error instanceof RateKitError ? error : new RateKitError('ERR_RATEKIT_INVALID_OPTION', `background work failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error }),
    );
  }

  function keyOf(context: TContext, address: string | undefined): MaybePromise<KeyResult> {
    if (keyGenerator === undefined) {
      if (address === undefined || address === '') throw new RateKitError('ERR_RATEKIT_KEY', 'No client address for the default key: give one, or a `keyGenerator`');
      return ipKeyGenerator(trustProxy === false ? address : clientAddress(address, adapter.forwardedFor(context), trustProxy), ipv6Subnet);
    }
    let key: KeyResult | Promise<KeyResult>;
    try {
      key = keyGenerator(context, address);
    } catch (error) {
      throw keyError(error);
    }
    return key instanceof Promise ? key.then(checkedKey, (error: unknown) => Promise.reject(keyError(error))) : checkedKey(key);
  }

  /** A key `keyGenerator` returned, checked: a non-empty string, a finite number, or `false`. */
  function checkedKey(key: unknown): KeyResult {
    if (key === false || (typeof key === 'string' && key !== '') || (typeof key === 'number' && Number.isFinite(key))) return key;
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- objects are described; String() only sees primitives here
    const got = typeof key === 'string' ? '""' : key === null ? 'null' : typeof key === 'object' ? 'an object' : String(key);
    throw new RateKitError('ERR_RATEKIT_KEY', `Expected the ${keyOption} to return a non-empty string, a finite number, or false to skip limiting, got ${got}`);
  }

  /** A key function's failure, as `ERR_RATEKIT_KEY` (an error that already is a `RateKitError` is kept). */
  function keyError(error: unknown): RateKitError {
    if (error instanceof RateKitError) return error;
    return new RateKitError('ERR_RATEKIT_KEY', `The ${keyOption} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }

  function decided(key: string, decision: Decision): GateDecided {
    let headers = headersOf === undefined ? noHeaders : headersOf(decision, key);
    if (decision.allowed && decision.delayMs > 0) headers = [...headers, [DELAY_HEADER, String(Math.ceil(decision.delayMs))]];
    return { key, decision, headers };
  }

  function keyed(context: TContext, id: KeyResult): MaybePromise<GateOutcome> {
    if (id === false) return unlimited;
    const key = typeof id === 'number' ? String(id) : id;
    const decision = needsContext ? consume(key, { context }) : consume(key);
    return decision instanceof Promise ? decision.then((d) => decided(key, d)) : decided(key, decision);
  }

  function unskipped(context: TContext, address: string | undefined): MaybePromise<GateOutcome> {
    const id = keyOf(context, address);
    return id instanceof Promise ? id.then((k) => keyed(context, k)) : keyed(context, id);
  }

  return {
    limiter,
    statusCode: resolved.statusCode,
    needsAddress: keyGenerator === undefined,
    needsContext,
    decide(context, address) {
      try {
        if (skip === undefined) return unskipped(context, address);
        return Promise.resolve(skip(context)).then((skipped) => (skipped ? unlimited : unskipped(context, address)));
      } catch (error) {
        return Promise.reject(error);
      }
    },
    key(context, address) {
      try {
        return keyOf(context, address);
      } catch (error) {
        return Promise.reject(error);
      }
    },
    decideFor(context, key) {
      try {
        return keyed(context, key);
      } catch (error) {
        return Promise.reject(error);
      }
    },
    refusalBody(context, decision) {
      return typeof message === 'function' ? message(context, decision) : (message ?? DEFAULT_REFUSAL_MESSAGE);
    },
    observe(outcome, context, waitUntil) {
      if (onDecision === undefined) return undefined;
      let work: unknown;
      try {
        work = onDecision(outcome.decision, context, outcome.key);
      } catch (error) {
        report(error);
        return undefined;
      }
      return inBackground(work, waitUntil, report);
    },
    report,
    writeHeaders(headers, target, set, append) {
      const appends = appendsLists && append !== undefined;
      for (let i = 0; i < headers.length; i++) {
        const [name, value] = headers[i]!;
        if (appends && isListField(name)) append(target, name, value);
        else set(target, name, value);
      }
    },
  };
}
