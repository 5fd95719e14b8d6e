/**
 * A Node built-in module where the runtime has one, taken with
 * `process.getBuiltinModule` (Node ≥ 20.16 and ≥ 22.3, Bun, Deno 2, and
 * Cloudflare Workers with `nodejs_compat`), never imported: a runtime without
 * it (Workers without `nodejs_compat`, Vercel's Edge runtime, a browser, Node
 * before 20.16) gets undefined and its caller's fallback, and a bundler has
 * no `node:` import to resolve.
 *
 * @param id - the module's `node:` specifier
 * @param usable - whether what was found has what the caller needs
 * @returns the module, or undefined; never throws
 */
export function builtinModule<T>(id: string, usable: (found: Partial<T>) => boolean): T | undefined {
  const process = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  try {
    const found = typeof process?.getBuiltinModule === 'function' ? (process.getBuiltinModule(id) as Partial<T> | undefined) : undefined;
    return found != null && usable(found) ? (found as T) : undefined;
  } catch {
    return undefined;
  }
}
