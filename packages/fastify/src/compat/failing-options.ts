import { RateKitOptionError } from '@ratekit/core';

/**
 * @fastify/rate-limit mode takes options as @fastify/rate-limit 11 does,
 * with its fallbacks (a plugin-level `onExceeding` that is not a function is
 * a no-op, a bad `max` is 1000, a falsy `allowList` is none), except a value
 * that can only fail: one that makes every request a 500. Those are refused
 * here: for the plugin's options when it is registered, for a route's
 * `config.rateLimit` when the route is declared (Fastify's `onRoute`).
 *
 * | option | refused when (@fastify/rate-limit would…) |
 * | --- | --- |
 * | `onExceeding`, `onExceeded`, `onBanReach` (route) | given and not a function: a route's value replaces the plugin's without its fallback (`params.onExceeding(req, key)` throws: 500 on every request) |
 * | `allowList` | truthy, and neither a function nor a list (`allowList.indexOf(key)` throws: 500 on every request) |
 * | `addHeaders`, `addHeadersOnExceeding` (route) | `null` (reading a header's flag throws: 500 on every request) |
 * | `hook` (route) | it cannot be a property name (an object with a null prototype: the route cannot be declared) |
 *
 * @param path - where the options are, for the error: `''` for the plugin's, `config.rateLimit.` for a route's
 * @throws {RateKitOptionError} (code `ERR_RATEKIT_INVALID_OPTION`) naming the option, what it expects and what it got
 */
export function refuseWhatCanOnlyFail(options: Readonly<Record<string, unknown>>, path: string, level: 'plugin' | 'route'): void {
  const { allowList } = options;
  if (allowList && typeof allowList !== 'function' && typeof (allowList as { includes?: unknown }).includes !== 'function') {
    throw new RateKitOptionError(`${path}allowList`, 'an array of keys or a function (request, key)', allowList);
  }
  if (level === 'plugin') return;
  for (const name of ['onExceeding', 'onExceeded', 'onBanReach'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function') throw new RateKitOptionError(`${path}${name}`, 'a function (request, key)', options[name]);
  }
  for (const name of ['addHeaders', 'addHeadersOnExceeding'] as const) {
    if (options[name] === null) throw new RateKitOptionError(`${path}${name}`, 'an object of header flags', null);
  }
  const { hook } = options;
  if (hook !== undefined && typeof hook !== 'symbol') {
    try {
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- only whether it can be a property name matters (a null-prototype object cannot), as the route uses it as one
      String(hook);
    } catch {
      throw new RateKitOptionError(`${path}hook`, "a hook name such as 'onRequest' or 'preHandler'", hook);
    }
  }
}
