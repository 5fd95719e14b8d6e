/**
 * Rate limiting for the Fetch API without a framework, on core's gate (skip, key, decision,
 * headers, refusal body, delay hold, background work). The Fetch API's part: the client address
 * (client-address.ts), fields in a `Headers`, a refusal `Response`, background work to the call's `waitUntil`.
 *
 * @module
 */
import { createGate, type Decision, type GateDecided, holdFor, type Limiter, type MessageBody } from '@ratekit/core';
import { type AddressLike, addressOf, missingAddress } from './client-address.js';
import { RENAMED, type RateLimitOptions, resolveIpHeader } from './options.js';
import { withHeaders } from './with-headers.js';

export { DELAY_HEADER } from '@ratekit/core';
export type { KeyResult, MessageBody } from '@ratekit/core';

/** What has `waitUntil`: a Worker's `ExecutionContext`, a Next.js `NextFetchEvent`. */
export interface WaitUntilContext {
  waitUntil(promise: Promise<unknown>): void;
}

/** What each call may take besides the `Request`. */
export interface RateLimitCall {
  /**
   * The client's address, which a `Request` does not carry: Bun's `server.requestIP(req)`, Deno's
   * `info.remoteAddr`, a string. Read by the default key (unless `ipHeader` is set) and passed to `keyGenerator`.
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
 * Builds the rate-limit function for a Fetch API server: `Bun.serve`, `Deno.serve`, a Cloudflare
 * Worker's `fetch`, Next.js middleware and route handlers. Options are core's `GateOptions`
 * (express-rate-limit's names, with ratekit's algorithms, policies, cost and stores) and `ipHeader`.
 *
 * The client address: give it per call (`{ ip: server.requestIP(req) }` on Bun, `{ ip:
 * info.remoteAddr }` on Deno), or set `ipHeader`, or give a `keyGenerator`; without any of them the
 * call's type requires `ip` (see client-address.ts).
 *
 * @param options - see {@link RateLimitOptions}
 * @returns the function `(request, call?) => Promise<RateLimitResult>`, with `.limiter`. A call rejects
 * with `ERR_RATEKIT_KEY` when the key cannot be had, `ERR_RATEKIT_STORE` on a store failure under
 * `onStoreError: 'throw'`, and with their own errors when `skip`, `handler` or `message` throw.
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
  const gate = createGate(options, {
    name: 'rateLimit()',
    options: ['ipHeader'],
    renamed: RENAMED,
    standardHeaders: 'draft-8',
    forwardedFor: (request) => request.headers.get('x-forwarded-for'),
  });
  const ipHeader = resolveIpHeader(options);
  const { handler } = options;

  /** The client address: the trusted edge header, or the call's (then `trustProxy` applies in the gate). */
  function addressFor(request: Request, call: RateLimitCall | undefined): string | undefined {
    if (ipHeader !== undefined) {
      const address = request.headers.get(ipHeader)?.trim();
      if (gate.needsAddress && (address === undefined || address === ''))
        throw missingAddress(`the request has no \`${ipHeader}\` header (\`ipHeader\`; does every request come through the edge that sets it?)`);
      return address;
    }
    const given = call?.ip;
    const address = addressOf(given);
    if (gate.needsAddress && address === undefined)
      throw missingAddress(call === undefined || !('ip' in call) ? 'the call gave no `ip`' : `the call's \`ip\` was ${given === null ? 'null (Bun gives null for a Unix socket)' : 'empty'}`);
    return address;
  }

  async function refusal(request: Request, decision: Decision, headers: Headers): Promise<Response> {
    if (handler !== undefined) return withHeaders(await handler(request, decision), headers);
    const body: MessageBody = await gate.refusalBody(request, decision);
    const answer = new Headers(headers);
    const text = typeof body === 'string';
    answer.set('content-type', text ? 'text/plain; charset=utf-8' : 'application/json');
    return new Response(text ? body : JSON.stringify(body), { status: gate.statusCode, headers: answer });
  }

  async function answer(request: Request, outcome: GateDecided, call: RateLimitCall | undefined): Promise<RateLimitResult> {
    const { decision, key } = outcome;
    const headers = new Headers(outcome.headers as Array<[string, string]>);
    const observed = gate.observe(outcome, request, call?.context === undefined ? undefined : (p) => call.context?.waitUntil(p));
    if (!decision.allowed) {
      const response = await refusal(request, decision, headers);
      await observed;
      return { allowed: false, response, headers, decision, key };
    }
    if (decision.delayMs > 0) await holdFor(decision.delayMs, request.signal);
    await observed;
    return { allowed: true, response: undefined, headers, decision, key };
  }

  const check = async (request: Request, call?: RateLimitCall): Promise<RateLimitResult> => {
    const outcome = await gate.decide(request, addressFor(request, call));
    if (outcome.key === undefined) return { allowed: true, response: undefined, headers: new Headers(), decision: undefined, key: undefined };
    return answer(request, outcome, call);
  };
  Object.defineProperty(check, 'limiter', { value: gate.limiter, enumerable: true });
  return check as RateLimitFunction<RateLimitCall>;
}
