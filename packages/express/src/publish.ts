import type { Request } from 'express';

/**
 * Sets `req[name]` to `info` with express-rate-limit's hidden `current` (the
 * hits: an own property that is neither enumerable, writable nor
 * configurable), as express-rate-limit v8 publishes its `requestPropertyName`
 * (default `rateLimit`). Both modes of the middleware publish through it.
 *
 * On Express 5 this store is the dearest step of a pass: Express gives each
 * request its app's prototype (`Object.setPrototypeOf(req, app.request)`),
 * after which every request object has a hidden class of its own, so V8
 * builds a new one to add the property: about 14,000 instructions (some
 * 4 µs) per request, measured with `bench/icount/http.mjs` (bench/notes/http.md,
 * "Per HTTP response"). Every middleware that adds a property to `req` pays it.
 *
 * @returns `info`
 */
export function publishInfo<T extends object>(req: Request, name: string, info: T, current: number): T {
  Object.defineProperty(info, 'current', { configurable: false, enumerable: false, value: current });
  (req as unknown as Record<string, T>)[name] = info;
  return info;
}
