/**
 * One script call over an `@upstash/redis` client (HTTP, any runtime) or a
 * look-alike with its two methods (Vercel KV): EVALSHA, then EVAL when the
 * error's text holds `NOSCRIPT` (a single command says `NOSCRIPT No matching
 * script…`, the client's auto-pipeline `Command failed: NOSCRIPT …`), as
 * `@upstash/ratelimit` does. EVAL also caches the script, so the next
 * EVALSHA hits. The TCP clients' counterpart is {@link redisScriptTransport}.
 *
 * @module
 */

/** The part of an `@upstash/redis` client (`Redis` from any of its entries) a script call uses. */
export interface UpstashScriptClient {
  evalsha(sha1: string, keys: string[], args: unknown[]): Promise<unknown>;
  eval(script: string, keys: string[], args: unknown[]): Promise<unknown>;
}

/**
 * The script call over `client`: resolves with the reply as the client
 * decodes it, or rejects with the client's error (after the EVAL, when
 * EVALSHA failed with `NOSCRIPT`). The methods are read at each call, never
 * before.
 *
 * @example
 * ```ts
 * import { Redis } from '@upstash/redis';
 * import { upstashScriptRun } from '@ratekit/redis/transport';
 * const run = upstashScriptRun(Redis.fromEnv());
 * const reply = await run(SCRIPT, SCRIPT_SHA1, ['{user:1}'], ['1000']);
 * ```
 */
export function upstashScriptRun(client: UpstashScriptClient): (script: string, sha: string, keys: string[], args: string[]) => Promise<unknown> {
  return async (script, sha, keys, args) => {
    try {
      return await client.evalsha(sha, keys, args);
    } catch (error) {
      if (!String(error).includes('NOSCRIPT')) throw error;
      return client.eval(script, keys, args);
    }
  };
}
