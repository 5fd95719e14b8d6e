/**
 * hono-rate-limiter 0.5.4's public types, under its names, so code written
 * against it type-checks against @ratekit/hono unchanged. The shapes follow
 * its `src/types.ts` (the `Store` contract is express-rate-limit v7's, with
 * Hono's types); the documentation is ours.
 *
 * @module
 */
import type { Context, Env, Input, Next } from 'hono';
import type { WSContext } from 'hono/ws';

/** A value, or a Promise of it: every store method and callback may be either. */
export type Promisify<T> = T | Promise<T>;

/** What a store answers for a key: the hits in its window and, when the store knows it, when the window ends. */
export interface ClientRateLimitInfo {
  totalHits: number;
  /** When the window ends (a `Date`); `RateLimit-Reset` is sent only when it is given. */
  resetTime?: Date;
}

/** What the middleware puts on the context under `requestPropertyName` (default `rateLimit`). */
export interface RateLimitInfo {
  limit: number;
  used: number;
  remaining: number;
  resetTime: Date | undefined;
}

/** A refusal's responder: `(c, next, options)`; what it returns is the response. */
export type RateLimitExceededEventHandler<E extends Env = Env, P extends string = string, I extends Input = Input> = (
  c: Context<E, P, I>,
  next: Next,
  optionsUsed: ConfigType<E, P, I>,
) => void | Response | Promise<void | Response>;

/** The key of a request; hono-rate-limiter has no default (`keyGenerator` is required). */
export interface KeyGeneratorType<E extends Env = Env, P extends string = string, I extends Input = Input> {
  keyGenerator: (c: Context<E, P, I>) => Promisify<string>;
}

/** The options the HTTP middleware and the Cloudflare binding mode share. */
export interface CommonConfigType<E extends Env = Env, P extends string = string, I extends Input = Input> {
  /** The refusal body: text, an object sent as JSON, or a function of the context. @default 'Too many requests, please try again later.' */
  message: string | Record<string, unknown> | ((c: Context<E, P, I>) => Promisify<string | Record<string, unknown>>);
  /** The refusal status. @default 429 */
  statusCode: number;
  /** Answers a refusal. @default sets `statusCode`, then `c.text` or `c.json` of `message` */
  handler: RateLimitExceededEventHandler<E, P, I>;
  /** True lets the request through uncounted. @default () => false */
  skip: (c: Context<E, P, I>) => Promisify<boolean>;
}

/** A Cloudflare Workers Rate Limiting binding (`env.MY_RATE_LIMITER`). */
export interface RateLimitBinding {
  limit: (options: { key: string }) => Promisify<{ success: boolean }>;
}

/** The binding mode's options, resolved. */
export type CloudflareConfigType<E extends Env = Env, P extends string = string, I extends Input = Input> = {
  binding: RateLimitBinding | ((c: Context<E, P, I>) => RateLimitBinding);
} & KeyGeneratorType<E, P, I> &
  CommonConfigType<E, P, I>;

/** The binding mode's options, as given. */
export type CloudflareConfigProps<E extends Env = Env, P extends string = string, I extends Input = Input> = {
  binding: RateLimitBinding | ((c: Context<E, P, I>) => RateLimitBinding);
} & KeyGeneratorType<E, P, I> &
  Partial<CommonConfigType<E, P, I>>;

/** The HTTP middleware's options, resolved (what `init` and `handler` receive). */
export type HonoConfigType<E extends Env = Env, P extends string = string, I extends Input = Input> = {
  /** The window, in milliseconds. @default 60_000 */
  windowMs: number;
  /** Requests per window and key, or a function of the context (called after the store's `increment`). @default 5 */
  limit: number | ((c: Context<E, P, I>) => Promisify<number>);
  /** `true` = `'draft-6'`; `false` sends no headers (and no `Retry-After`). @default 'draft-6' */
  standardHeaders: boolean | 'draft-6' | 'draft-7';
  /** @default 'rateLimit' */
  requestPropertyName: string;
  /** @default 'rateLimitStore' */
  requestStorePropertyName: string;
  /** @default false */
  skipFailedRequests: boolean;
  /** @default false */
  skipSuccessfulRequests: boolean;
  /** @default (c) => c.res.status < 400 */
  requestWasSuccessful: (c: Context<E, P, I>) => Promisify<boolean>;
  /** @default new MemoryStore() */
  store: Store<E, P, I>;
} & KeyGeneratorType<E, P, I> &
  CommonConfigType<E, P, I>;

/** The HTTP middleware's options, as given: `keyGenerator` and any of {@link HonoConfigType}. */
export type HonoConfigProps<E extends Env = Env, P extends string = string, I extends Input = Input> = {
  binding?: never;
} & KeyGeneratorType<E, P, I> &
  Partial<HonoConfigType<E, P, I>>;

export type ConfigType<E extends Env = Env, P extends string = string, I extends Input = Input> = HonoConfigType<E, P, I> | CloudflareConfigType<E, P, I>;
export type ConfigProps<E extends Env = Env, P extends string = string, I extends Input = Input> = HonoConfigProps<E, P, I> | CloudflareConfigProps<E, P, I>;

/** WebSocket close codes the WebSocket limiter may close with. */
export type WSStatusCode = 1000 | 1001 | 1002 | 1003 | 1004 | 1005 | 1006 | 1007 | 1008 | 1009 | 1010;

/** A refused message's responder: `(event, ws, options)`. @default closes the socket with `statusCode` and `message` */
export type WSRateLimitExceededEventHandler<E extends Env = Env, P extends string = string, I extends Input = Input> = (
  event: unknown,
  ws: WSContext,
  optionsUsed: WSConfigType<E, P, I>,
) => void | Promise<void>;

/** The WebSocket limiter's options, resolved. */
export interface WSConfigType<E extends Env = Env, P extends string = string, I extends Input = Input> extends Omit<
  HonoConfigType<E, P, I>,
  'statusCode' | 'standardHeaders' | 'requestWasSuccessful' | 'handler' | 'skip'
> {
  message: string;
  /** @default 1008 (policy violation) */
  statusCode: WSStatusCode;
  handler: WSRateLimitExceededEventHandler<E, P, I>;
  skip: (event: unknown, ws: WSContext) => Promisify<boolean>;
}

/** The WebSocket limiter's options, as given. */
export type WSConfigProps<E extends Env = Env, P extends string = string, I extends Input = Input> = KeyGeneratorType<E, P, I> & Partial<WSConfigType<E, P, I>>;

/**
 * hono-rate-limiter's store contract (express-rate-limit v7's): `increment`,
 * `decrement` and `resetKey` are required, the rest optional; each may
 * answer synchronously or with a Promise. Its own stores and third-party
 * ones written to it plug into {@link rateLimiter} as they are.
 */
export interface Store<E extends Env = Env, P extends string = string, I extends Input = Input> {
  /** Called once, when the middleware is built, with its resolved options. */
  init?: (options: HonoConfigType<E, P, I>) => void;
  get?: (key: string) => Promisify<ClientRateLimitInfo | undefined>;
  increment: (key: string) => Promisify<ClientRateLimitInfo>;
  decrement: (key: string) => Promisify<void>;
  resetKey: (key: string) => Promisify<void>;
  resetAll?: () => Promisify<void>;
  shutdown?: () => Promisify<void>;
  localKeys?: boolean;
  prefix?: string;
}

/** What the middleware puts on the context under `requestStorePropertyName` (default `rateLimitStore`). */
export interface RateLimitStoreAccess {
  getKey: ((key: string) => Promisify<ClientRateLimitInfo | undefined>) | undefined;
  resetKey: (key: string) => Promisify<void>;
}
