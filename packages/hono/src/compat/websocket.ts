/**
 * hono-rate-limiter's `webSocketLimiter(config)`: wraps the events factory
 * given to Hono's `upgradeWebSocket` so that every incoming message counts
 * one hit under `keyGenerator(c)` (the upgrade request's context). A
 * message over the limit is not passed on: `handler` answers it (by
 * default, closing the socket with `statusCode` 1008 and `message`).
 * `skipSuccessfulRequests` gives a hit back after `onMessage` returns,
 * `skipFailedRequests` when it throws. Options and defaults are
 * hono-rate-limiter 0.5.4's; like {@link rateLimiter}, a missing
 * `keyGenerator` throws when the limiter is built.
 *
 * @module
 */
/* eslint-disable @typescript-eslint/no-misused-promises, @typescript-eslint/await-thenable -- as upstream's, the events are async (Hono awaits none of them) and await user callbacks typed as returning void */
import { RateKitOptionError, resolveStoreTimeoutMs, withStoreTimeout } from '@ratekit/core';
import type { Context, Env, Input } from 'hono';
import type { WSEvents } from 'hono/ws';
import { MemoryStore } from './memory-store.js';
import { DEFAULT_MESSAGE, type StoreTimeoutOption } from './rate-limiter.js';
import type { HonoConfigType, Promisify, RateLimitInfo, RateLimitStoreAccess, Store, WSConfigProps, WSConfigType } from './types.js';

/**
 * Limits the messages of Hono WebSockets, per `keyGenerator` key.
 *
 * @throws {RateKitOptionError} when `keyGenerator` is not a function.
 * @throws {Error} `The store is not correctly implemented!` when `store` has no `increment`.
 * @example
 * ```ts
 * import { upgradeWebSocket } from 'hono/cloudflare-workers';
 * import { webSocketLimiter } from '@ratekit/hono';
 *
 * const limit = webSocketLimiter({ windowMs: 60_000, limit: 10, keyGenerator: (c) => c.req.header('cf-connecting-ip') ?? '' });
 * app.get('/ws', upgradeWebSocket(limit(() => ({ onMessage: (event, ws) => ws.send(`echo ${String(event.data)}`) }))));
 * ```
 * @see https://github.com/rhinobase/hono-rate-limiter (its `webSocketLimiter`)
 */
export function webSocketLimiter<E extends Env = Env, P extends string = string, I extends Input = Input>(
  config: WSConfigProps<E, P, I> & StoreTimeoutOption,
): (createEvents: (c: Context<E, P, I>) => WSEvents | Promise<WSEvents>) => (c: Context<E, P, I>) => Promise<WSEvents> {
  if (typeof (config as { keyGenerator?: unknown }).keyGenerator !== 'function') {
    throw new RateKitOptionError('keyGenerator', 'a function of the context returning the key (hono-rate-limiter requires it)', (config as { keyGenerator?: unknown }).keyGenerator);
  }
  const { storeTimeoutMs: timeoutOption, ...given } = config;
  const storeTimeoutMs = resolveStoreTimeoutMs(timeoutOption);
  const defined: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(given as Record<string, unknown>)) if (value !== undefined) defined[name] = value;
  const options = {
    windowMs: 60_000,
    limit: 5,
    message: DEFAULT_MESSAGE,
    statusCode: 1008,
    requestPropertyName: 'rateLimit',
    requestStorePropertyName: 'rateLimitStore',
    skipFailedRequests: false,
    skipSuccessfulRequests: false,
    skip: () => false,
    handler: (_event: unknown, ws: { close: (code?: number, reason?: string) => void }, used: WSConfigType<E, P, I>) => ws.close(used.statusCode, used.message),
    ...defined,
  } as unknown as WSConfigType<E, P, I>;
  if ((options.store as Store<E, P, I> | undefined) === undefined) options.store = new MemoryStore<E, P, I>();
  const { limit, requestPropertyName, requestStorePropertyName, skipFailedRequests, skipSuccessfulRequests, skip, keyGenerator, handler, store } = options;
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- public input: JavaScript callers can pass anything
  if (!store?.increment) throw new Error('The store is not correctly implemented!');
  if (typeof store.init === 'function') store.init(options as unknown as HonoConfigType<E, P, I>);
  const bounded = <T>(value: Promisify<T>): Promisify<T> => (value instanceof Promise ? withStoreTimeout(value, storeTimeoutMs, 'the store') : value);
  const storeAccess: RateLimitStoreAccess = { getKey: store.get?.bind(store), resetKey: store.resetKey.bind(store) };

  return (createEvents) => async (c) => {
    const events = await createEvents(c);
    return {
      ...events,
      async onMessage(event, ws) {
        if (await skip(event, ws)) {
          await events.onMessage?.(event, ws);
          return;
        }
        const key = await keyGenerator(c);
        const { totalHits, resetTime } = await bounded(store.increment(key));
        const max = typeof limit === 'function' ? await limit(c) : limit;
        const info: RateLimitInfo = { limit: max, used: totalHits, remaining: Math.max(max - totalHits, 0), resetTime };
        (c.set as (name: string, value: unknown) => void)(requestPropertyName, info);
        (c.set as (name: string, value: unknown) => void)(requestStorePropertyName, storeAccess);
        if (totalHits > max) {
          await handler(event, ws, options);
          return;
        }
        try {
          await events.onMessage?.(event, ws);
          if (skipSuccessfulRequests) await bounded(store.decrement(key));
        } catch (error) {
          if (skipFailedRequests) await bounded(store.decrement(key));
          throw error;
        }
      },

      async onError(event, ws) {
        events.onError?.(event, ws);
      },
    };
  };
}
