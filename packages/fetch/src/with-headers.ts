/**
 * Adding the rate-limit headers to a response the app made. A `Response`'s
 * headers are sometimes immutable (one from `fetch()`, or `Response.redirect()`
 * on Workers), and setting a field then throws a `TypeError`; the rule here is
 * to set them in place when the runtime allows it and otherwise answer a copy
 * (same body stream, status and headers), which is what the Workers docs
 * advise for altering a fetched response.
 *
 * @module
 */

/**
 * `response` with `headers` set on it, replacing fields of the same names:
 * the response itself when its headers can change, else a copy of it.
 *
 * @param response - the app's response
 * @param headers - the fields to set, e.g. a `rateLimit` result's `headers`
 * @returns the response to send (use it, not `response`: it may be a copy)
 * @example
 * ```ts
 * const result = await limit(request, { ip: server.requestIP(request) });
 * if (result.response) return result.response;
 * return withHeaders(await fetch(upstream), result.headers);
 * ```
 */
export function withHeaders(response: Response, headers: Headers): Response {
  try {
    headers.forEach((value, name) => response.headers.set(name, value));
    return response;
  } catch {
    // Immutable headers (a TypeError, perhaps of another realm: not checked with instanceof). The
    // fields themselves are valid, so a copy takes them; if it cannot, its own error propagates.
    const copy = new Response(response.body, { status: response.status, statusText: response.statusText, headers: response.headers });
    headers.forEach((value, name) => copy.headers.set(name, value));
    return copy;
  }
}
