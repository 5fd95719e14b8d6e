/**
 * Rate limiting for the Fetch API without a framework: `rateLimit(options)`
 * builds one function from a `Request` to either a refusal `Response` or the
 * headers to add to the app's own.
 *
 * Per call: `skip` → key (the client address given for the call, or the
 * trusted edge header, grouped by `ipv6Subnet`; or `keyGenerator`) → one
 * decision of a @ratekit/core limiter → the RateLimit headers (on passes and
 * refusals alike) → `onDecision` in the background → on a refusal, the
 * `handler`'s or the `statusCode`/`message` Response, with the headers and
 * `Retry-After`; on a pass held by the `delay` algorithm, the wait.
 * Refusals charge nothing. Failures reject the call, coded: a key that cannot
 * be had (`ERR_RATEKIT_KEY`), a store failure under `onStoreError: 'throw'`
 * (`ERR_RATEKIT_STORE`); a throwing `skip`, `handler` or `message` rejects
 * with its own error.
 *
 * @module
 */
import { clientAddress, createLimiter, type Decision, DEFAULT_REFUSAL_MESSAGE, headerListOf, holdFor, ipKeyGenerator, type Limiter, RateKitError } from '@ratekit/core';
import { inBackground, type WaitUntilContext } from './background.js';
import { type AddressLike, addressOf, missingAddress } from './client-address.js';
import { type KeyResult, type MessageBody, type RateLimitOptions, resolveOptions } from './options.js';
import { withHeaders } from './with-headers.js';

/** The header that shows how long a pass was held by the `delay` algorithm, in ms (as @ratekit/express). */
export const DELAY_HEADER = 'X-Slow-Down-Delay';

/** What each call may take besides the `Request`. */
export interface RateLimitCall {
  /**
   * The client's address, which a `Request` does not carry: Bun's
   * `server.requestIP(req)`, Deno's `info.remoteAddr`, a string. Read by the
   * default key (unless `ipHeader` is set) and passed to `keyGenerator`.
   */
  ip?: AddressLike;
  /** Where background work goes: a Worker's `ctx`, Next.js middleware's `event`. See `onDecision`. */
  context?: WaitUntilContext;
}

/** A call of a function whose default key needs the address: `ip` must be given (it may still be `null`, which fails the call). */
export interface RateLimitCallWithAddress extends RateLimitCall {
  ip: AddressLike;
}

/** A request that passes: add `headers` to the app's response (see `withHeaders`). */
export interface RateLimitPass {
  readonly allowed: true;
  readonly response: undefined;
  /** The RateLimit fields for the app's response; empty when the request was skipped or the headers are off. */
  readonly headers: Headers;
  /** The limiter's decision; undefined when `skip` or `keyGenerator` let the request through unlimited. */
  readonly decision: Decision | undefined;
  /** The key counted; undefined when the request was let through unlimited. */
  readonly key: string | undefined;
}

/** A request refused: answer `response` (status, body, RateLimit fields and `Retry-After`). */
export interface RateLimitRefusal {
  readonly allowed: false;
  readonly response: Response;
  /** The same fields as on `response`. */
  readonly headers: Headers;
  readonly decision: Decision;
  readonly key: string;
}

/** What a call resolves to. */
export type RateLimitResult = RateLimitPass | RateLimitRefusal;

/** The function {@link rateLimit} builds, with its limiter (for `refund`, `reset` and `peek`). */
export interface RateLimitFunction<TCall extends RateLimitCall = RateLimitCall> {
  (request: Request, ...call: TCall extends RateLimitCallWithAddress ? [call: TCall] : [call?: TCall]): Promise<RateLimitResult>;
  readonly limiter: Limiter<Request>;
}

/**
 * Builds the rate-limit function for a Fetch API server: `Bun.serve`,
 * `Deno.serve`, a Cloudflare Worker's `fetch`, Next.js middleware and route
 * handlers. Options are express-rate-limit's where the Fetch API has the
 * same thing, with ratekit's algorithms, policies, cost and stores.
 *
 * The client address: a `Request` does not carry it, so give it per call
 * (`{ ip: server.requestIP(req) }` on Bun, `{ ip: info.remoteAddr }` on Deno),
 * or name the header a trusted edge sets (`ipHeader: 'cf-connecting-ip'` on
 * Workers), or give a `keyGenerator`. Without any of them the type of the
 * call requires `ip`, and a call without an address rejects with
 * `ERR_RATEKIT_KEY`: there is no fall-back to a header a client can write.
 *
 * @param options - see {@link RateLimitOptions}
 * @returns the function `(request, call?) => Promise<RateLimitResult>`, with `.limiter`
 * @throws {RateKitOptionError} (code `ERR_RATEKIT_INVALID_OPTION`) at build time, naming the first bad option
 * @example
 * ```ts
 * const limit = rateLimit({ limit: 100, windowMs: 60_000 });
 * Bun.serve({
 *   async fetch(req, server) {
 *     const result = await limit(req, { ip: server.requestIP(req) });
 *     if (result.response) return result.response; // 429, with RateLimit and Retry-After
 *     return new Response('hello', { headers: result.headers });
 *   },
 * });
 * ```
 */
export function rateLimit(options: RateLimitOptions & ({ keyGenerator: NonNullable<RateLimitOptions['keyGenerator']> } | { ipHeader: string })): RateLimitFunction;
export function rateLimit(options?: RateLimitOptions): RateLimitFunction<RateLimitCallWithAddress>;
export function rateLimit(options: RateLimitOptions = {}): RateLimitFunction<RateLimitCall> {
  const resolved = resolveOptions(options);
  const { statusCode, ipHeader, trustProxy, ipv6Subnet, needsContext } = resolved;
  const { skip, keyGenerator, handler, message, onDecision } = options;
  // The core checks limits, cost, store, prefix, onStoreError, storeTimeoutMs, now and refusalCache, and names the option.
  const limiter = createLimiter<Request>({
    limits: resolved.limits,
    cost: options.cost,
    store: options.store,
    prefix: options.prefix,
    now: options.now,
    onStoreError: options.onStoreError,
    storeTimeoutMs: options.storeTimeoutMs,
    onError: options.onError,
    refusalCache: options.refusalCache,
  });
  const onError = options.onError ?? ((error: RateKitError) => console.error(error));
  const headerOptions = resolved.headerOptions;
  // core's rateLimitHeaders(decision, headerOptions), built once per change of its figures.
  const headerList = resolved.anyHeaders ? headerListOf(headerOptions) : undefined;

  /** The default key: the trusted edge header, or the call's address (past `trustProxy`), grouped by `ipv6Subnet`. */
  function defaultKey(request: Request, given: AddressLike, ip: string | undefined, call: RateLimitCall | undefined): string {
    let address: string | undefined;
    if (ipHeader !== undefined) {
      address = request.headers.get(ipHeader)?.trim();
      if (address === undefined || address === '') throw missingAddress(`the request has no \`${ipHeader}\` header (\`ipHeader\`; does every request come through the edge that sets it?)`);
    } else {
      if (ip === undefined)
        throw missingAddress(call === undefined || !('ip' in call) ? 'the call gave no `ip`' : `the call's \`ip\` was ${given === null ? 'null (Bun gives null for a Unix socket)' : 'empty'}`);
      address = trustProxy === false ? ip : clientAddress(ip, request.headers.get('x-forwarded-for'), trustProxy);
    }
    return ipKeyGenerator(address, ipv6Subnet);
  }

  async function keyOf(request: Request, call: RateLimitCall | undefined): Promise<KeyResult> {
    const given = call?.ip;
    const ip = addressOf(given);
    if (keyGenerator === undefined) return defaultKey(request, given, ip, call);
    let key: unknown;
    try {
      key = await keyGenerator(request, ip);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new RateKitError('ERR_RATEKIT_KEY', `The keyGenerator failed: ${reason}`, { cause: error });
    }
    if (key === false || (typeof key === 'string' && key !== '')) return key;
    throw new RateKitError('ERR_RATEKIT_KEY', `Expected the keyGenerator to return a non-empty string or false, got ${typeof key === 'string' ? '""' : key === null ? 'null' : typeof key}`);
  }

  /** The Headers of a decision for this key (draft-8's `pk` is the key's hash). */
  function headersOf(decision: Decision, key: string): Headers {
    if (headerList === undefined) return new Headers();
    headerOptions.partitionKey = key; // safe to share: headerList runs synchronously
    return new Headers(headerList(decision) as Array<[string, string]>);
  }

  async function refusal(request: Request, decision: Decision, headers: Headers): Promise<Response> {
    if (handler !== undefined) return withHeaders(await handler(request, decision), headers);
    const body: MessageBody = typeof message === 'function' ? await message(request, decision) : (message ?? DEFAULT_REFUSAL_MESSAGE);
    const answer = new Headers(headers);
    if (typeof body === 'string') {
      answer.set('content-type', 'text/plain; charset=utf-8');
      return new Response(body, { status: statusCode, headers: answer });
    }
    answer.set('content-type', 'application/json');
    return new Response(JSON.stringify(body), { status: statusCode, headers: answer });
  }

  /** `onDecision`'s work: in the background where the call gave a `waitUntil`, else awaited; failures to `onError`. */
  function observe(decision: Decision, request: Request, key: string, call: RateLimitCall | undefined): Promise<void> | undefined {
    if (onDecision === undefined) return undefined;
    const report = (error: unknown) =>
      onError(
        error instanceof RateKitError ? error : new RateKitError('ERR_RATEKIT_INVALID_OPTION', `\`onDecision\` failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error }),
      );
    let work: unknown;
    try {
      work = onDecision(decision, request, key);
    } catch (error) {
      report(error);
      return undefined;
    }
    return inBackground(work, call?.context, report);
  }

  const check = async (request: Request, call?: RateLimitCall): Promise<RateLimitResult> => {
    if (skip !== undefined && (await skip(request))) return { allowed: true, response: undefined, headers: new Headers(), decision: undefined, key: undefined };
    const key = await keyOf(request, call);
    if (key === false) return { allowed: true, response: undefined, headers: new Headers(), decision: undefined, key: undefined };
    const decision = await (needsContext ? limiter.consume(key, { context: request }) : limiter.consume(key));
    const headers = headersOf(decision, key);
    const observed = observe(decision, request, key, call);
    if (!decision.allowed) {
      const response = await refusal(request, decision, headers);
      await observed;
      return { allowed: false, response, headers, decision, key };
    }
    if (decision.delayMs > 0) {
      const delayMs = Math.ceil(decision.delayMs);
      headers.set(DELAY_HEADER, String(delayMs));
      await holdFor(delayMs, request.signal);
    }
    await observed;
    return { allowed: true, response: undefined, headers, decision, key };
  };
  Object.defineProperty(check, 'limiter', { value: limiter, enumerable: true });
  return check as RateLimitFunction<RateLimitCall>;
}
