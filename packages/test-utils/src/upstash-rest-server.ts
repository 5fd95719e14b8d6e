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
 * @module
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

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
      try {
        return send(200, { result: encode(await options.sendCommand(command)) });
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
        try {
          const replies = await options.multi(list);
          return send(
            200,
            replies.map((reply) => (reply instanceof Error ? { error: reply.message } : { result: encode(reply) })),
          );
        } catch (error) {
          return send(400, { error: messageOf(error) });
        }
      }
      const replies: unknown[] = [];
      // In order, each awaited: a pipeline's commands run one after the other, as Upstash runs them.
      for (const command of list) {
        try {
          replies.push({ result: encode(await options.sendCommand(command)) });
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
