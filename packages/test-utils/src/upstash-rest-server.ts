/**
 * A local HTTP endpoint speaking Upstash's Redis REST protocol in front of a real Redis, so stores
 * and adapters built on `@upstash/redis` are tested against Redis itself, offline.
 *
 * The rule: every command is forwarded unchanged to the Redis connection the caller gives, and its
 * reply or error is sent back the way Upstash's REST API sends it (what `@upstash/redis` 1.39's
 * `HttpClient` reads):
 * - `POST /` with a JSON array, one command (`["EVALSHA", sha, "1", key, arg]`): `200 {"result": …}`,
 *   or `400 {"error": "<the Redis error>"}`;
 * - `POST /pipeline` with an array of commands: `200 [{"result": …} | {"error": …}, …]`, in order,
 *   not atomic;
 * - `POST /multi-exec` with an array of commands: the same replies, as one MULTI/EXEC (only when
 *   the caller gives `multi`);
 * - `Authorization: Bearer <token>` required: `401 {"error": "Unauthorized"}` otherwise;
 * - with the request header `Upstash-Encoding: base64` (the client's default), every string in a
 *   result is base64 of its UTF-8 bytes, but `OK` (the client decodes every string but `OK`).
 * Nothing is cached or interpreted here, so a test of the store sees Redis's own behaviour
 * (NOSCRIPT, WRONGTYPE, TIME) through the HTTP layer.
 *
 * One exception, so the endpoint accepts what Upstash's server accepts: the script flag
 * `allow-key-locking`. `@upstash/ratelimit` 2.2's scripts start with `#!lua flags=allow-key-locking`,
 * which Upstash's server takes and Redis 7 refuses ("ERR Unexpected flag in script shebang"). For
 * EVAL, EVAL_RO, EVALSHA, EVALSHA_RO, SCRIPT LOAD and SCRIPT EXISTS (in every path: `/`, `/pipeline`,
 * `/multi-exec`):
 * - a script whose first line is a `#!lua` shebang naming `allow-key-locking` among its `flags=`
 *   reaches Redis with that one flag taken out of that line (`#!lua flags=no-writes,allow-key-locking`
 *   becomes `#!lua flags=no-writes`, `#!lua flags=allow-key-locking` becomes `#!lua`); the other
 *   lines and flags are kept as they are, so the script keeps its shebang (Redis's checks of a
 *   script with one) and Lua's line numbers;
 * - the SHA-1 the client computed (of the text it sent) is remembered as standing for the SHA-1 of
 *   the text Redis got: EVALSHA and SCRIPT EXISTS of it ask Redis about the text Redis knows, and
 *   SCRIPT LOAD answers the client's SHA-1, as Upstash's server does. Redis still decides whether a
 *   script is loaded: EVALSHA of a SHA-1 never loaded here (or flushed since) is Redis's own NOSCRIPT.
 *   The memory is this endpoint's own, like a server's script cache: two endpoints in front of one
 *   Redis (two "regions") do not see each other's flagged scripts.
 * Any other script, flag or command is forwarded as it is (an unknown flag of another name is still
 * Redis's error).
 *
 * Why that is safe: the flag is a hint to Upstash's server about how it may schedule the script (it
 * takes locks on the keys the script declares), asking for no behaviour a script could observe beyond
 * the script running atomically. Redis runs every script atomically, nothing else interleaving, which
 * is at least what the flag allows; so without the flag the script computes the same replies and
 * writes the same keys. The text Redis gets differs from the client's only in its shebang line,
 * which Redis reads for flags and Lua never runs.
 *
 * @module
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';

/** Options of {@link startUpstashRestServer}. */
export interface UpstashRestServerOptions {
  /**
   * Sends one command to Redis and resolves with its reply (strings, numbers, null, arrays),
   * rejecting with the Redis error: node-redis's `(args) => client.sendCommand(args)`.
   */
  sendCommand: (args: string[]) => Promise<unknown>;
  /** Runs commands as one MULTI/EXEC, resolving with each reply (an `Error` for a command that failed). Without it, `/multi-exec` answers 501. */
  multi?: (commands: string[][]) => Promise<unknown[]>;
  /** The bearer token clients must send. @default a random UUID */
  token?: string;
}

/** A running endpoint: pass `url` and `token` to `new Redis({ url, token })`. */
export interface UpstashRestServer {
  readonly url: string;
  readonly token: string;
  /** Every command received, in order (a pipeline's each), for tests that count round trips. */
  readonly commands: string[][];
  /** How many HTTP requests were answered. */
  readonly requests: () => number;
  /** Stops listening and closes open connections. */
  close(): Promise<void>;
}

/**
 * Starts the endpoint on a free loopback port.
 *
 * @example
 * ```ts
 * const redis = await createClient({ url: 'redis://127.0.0.1:6379' }).connect();
 * const rest = await startUpstashRestServer({ sendCommand: (args) => redis.sendCommand(args) });
 * const upstash = new Redis({ url: rest.url, token: rest.token });
 * // ...
 * await rest.close();
 * ```
 */
export async function startUpstashRestServer(options: UpstashRestServerOptions): Promise<UpstashRestServer> {
  const token = options.token ?? crypto.randomUUID();
  const commands: string[][] = [];
  let requests = 0;
  // The client's SHA-1 of each `allow-key-locking` script -> the SHA-1 of the text Redis got (see the rule above).
  const shas = new Map<string, string>();
  const forRedis = (command: string[]) => translateKeyLocking(command, shas);

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    requests++;
    const send = (status: number, body: unknown) => {
      const text = JSON.stringify(body);
      response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      response.end(text);
    };
    if (request.headers.authorization !== `Bearer ${token}`) return send(401, { error: 'Unauthorized' });
    if (request.method !== 'POST') return send(405, { error: 'Method not allowed: POST only' });
    const base64 = String(request.headers['upstash-encoding'] ?? '').toLowerCase() === 'base64';
    const encode = (value: unknown): unknown => (base64 ? toBase64(value) : value);
    let body: unknown;
    try {
      body = JSON.parse(await readBody(request));
    } catch {
      return send(400, { error: 'ERR failed to parse the request body as JSON' });
    }
    const path = (request.url ?? '/').split('?')[0];
    if (path === '/' || path === '') {
      if (!isCommand(body)) return send(400, { error: 'ERR the body must be a JSON array: a command and its arguments' });
      const command = body.map(String);
      commands.push(command);
      const { args, reply } = forRedis(command);
      try {
        return send(200, { result: encode(reply(await options.sendCommand(args))) });
      } catch (error) {
        return send(400, { error: messageOf(error) });
      }
    }
    if (path === '/pipeline' || path === '/multi-exec') {
      if (!Array.isArray(body) || !body.every(isCommand)) return send(400, { error: 'ERR the body must be a JSON array of commands' });
      const list = (body as unknown[][]).map((command) => command.map(String));
      commands.push(...list);
      if (path === '/multi-exec') {
        if (options.multi === undefined) return send(501, { error: 'ERR this test endpoint was started without multi' });
        const translated = list.map(forRedis);
        try {
          const replies = await options.multi(translated.map(({ args }) => args));
          return send(
            200,
            replies.map((reply, at) => (reply instanceof Error ? { error: reply.message } : { result: encode(translated[at]?.reply(reply) ?? reply) })),
          );
        } catch (error) {
          return send(400, { error: messageOf(error) });
        }
      }
      const replies: unknown[] = [];
      // In order, each awaited: a pipeline's commands run one after the other, as Upstash runs them.
      for (const command of list) {
        const { args, reply } = forRedis(command);
        try {
          replies.push({ result: encode(reply(await options.sendCommand(args))) });
        } catch (error) {
          replies.push({ error: messageOf(error) });
        }
      }
      return send(200, replies);
    }
    return send(404, { error: `ERR unknown path ${path}` });
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: messageOf(error) }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    commands,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error === undefined ? resolve() : reject(error)));
        server.closeAllConnections();
      }),
  };
}

const KEY_LOCKING = 'allow-key-locking';

/**
 * `script` with `allow-key-locking` taken out of its `#!lua` shebang's flags, or `undefined` when its
 * first line is no such shebang (the script then goes to Redis as it is).
 */
export function withoutKeyLocking(script: string): string | undefined {
  const end = script.indexOf('\n');
  const line = end === -1 ? script : script.slice(0, end);
  const rest = line.slice('#!lua'.length);
  if (!line.startsWith('#!lua') || (rest !== '' && !/^\s/.test(rest))) return undefined;
  const words = rest.trim().split(/\s+/).filter(Boolean);
  const at = words.findIndex((word) => word.startsWith('flags='));
  if (at === -1) return undefined;
  const flags = (words[at] ?? '').slice('flags='.length).split(',');
  if (!flags.includes(KEY_LOCKING)) return undefined;
  const kept = flags.filter((flag) => flag !== KEY_LOCKING);
  words.splice(at, 1, ...(kept.length === 0 ? [] : [`flags=${kept.join(',')}`]));
  const shebang = ['#!lua', ...words].join(' ');
  return end === -1 ? shebang : shebang + script.slice(end);
}

const sha1 = (text: string) => createHash('sha1').update(text, 'utf8').digest('hex');
const same = (reply: unknown) => reply;

/**
 * The command Redis gets for `command`, and how its reply goes back to the client: the
 * `allow-key-locking` rule of this module's header, remembering in `shas` the client's SHA-1 of each
 * flagged script it sees.
 */
function translateKeyLocking(command: string[], shas: Map<string, string>): { args: string[]; reply: (reply: unknown) => unknown } {
  const [head = '', first, second, ...tail] = command;
  const name = head.toUpperCase();
  const strip = (script: string | undefined) => {
    const stripped = script === undefined ? undefined : withoutKeyLocking(script);
    if (script === undefined || stripped === undefined) return undefined;
    const sha = sha1(script);
    shas.set(sha, sha1(stripped));
    return { stripped, sha };
  };
  const known = (sha: string) => shas.get(sha.toLowerCase()) ?? sha;
  if (name === 'EVAL' || name === 'EVAL_RO') {
    const flagged = strip(first);
    return { args: flagged === undefined ? command : [head, flagged.stripped, ...command.slice(2)], reply: same };
  }
  if ((name === 'EVALSHA' || name === 'EVALSHA_RO') && first !== undefined) {
    return { args: [head, known(first), ...command.slice(2)], reply: same };
  }
  if (name === 'SCRIPT' && first !== undefined && second !== undefined) {
    const sub = first.toUpperCase();
    if (sub === 'LOAD') {
      const flagged = strip(second);
      if (flagged === undefined) return { args: command, reply: same };
      // Redis answers the SHA-1 of the text it got; the client expects the one of the text it sent.
      return { args: [head, first, flagged.stripped, ...tail], reply: (reply) => (typeof reply === 'string' ? flagged.sha : reply) };
    }
    if (sub === 'EXISTS') return { args: [head, first, ...command.slice(2).map(known)], reply: same };
  }
  return { args: command, reply: same };
}

function isCommand(value: unknown): value is (string | number)[] {
  // @upstash/redis sends every argument as a string or a number (it serialises objects itself).
  return Array.isArray(value) && value.length > 0 && value.every((part) => typeof part === 'string' || typeof part === 'number');
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

/** A reply with its strings as base64 (but `OK`), as Upstash sends it under `Upstash-Encoding: base64`. */
function toBase64(value: unknown): unknown {
  if (typeof value === 'string') return value === 'OK' ? value : Buffer.from(value, 'utf8').toString('base64');
  if (Array.isArray(value)) return value.map(toBase64);
  return value;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
