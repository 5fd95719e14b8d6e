import { Socket } from 'node:net';

/**
 * A minimal Memcached client for the meta protocol (`mg`, `ms`, `md`, `ma`,
 * memcached 1.6+), written for the store: no published Node client speaks
 * the meta protocol (see the README).
 *
 * - A few connections per server over `node:net`, opened lazily.
 * - Pipelined: commands are written as they come (one write per tick) and
 *   replies are matched to commands in order, as Memcached answers a
 *   connection's commands in order.
 * - Every command has a timeout; a connection that stays silent for a whole
 *   timeout is closed, and the next command opens a new one, so the client
 *   recovers by itself when a server restarts.
 * - Failures reject with a {@link MemcachedError} carrying a stable `code`.
 */

/** The codes a {@link MemcachedError} carries. */
export type MemcachedErrorCode =
  /** No reply within the timeout. */
  | 'ERR_MEMCACHED_TIMEOUT'
  /** The connection could not be opened, or closed with commands in flight. */
  | 'ERR_MEMCACHED_CONNECTION'
  /** The server answered something the client cannot read, or refused a command (`ERROR`, `CLIENT_ERROR`). */
  | 'ERR_MEMCACHED_PROTOCOL'
  /** The server could not do it (`SERVER_ERROR`, for example an item larger than the server's item size limit). */
  | 'ERR_MEMCACHED_SERVER'
  /** Compare-and-set kept losing to concurrent writers of the same key until the attempts or the time ran out. */
  | 'ERR_MEMCACHED_CONTENTION'
  /** An item under one of the store's keys holds a value the store did not write. */
  | 'ERR_MEMCACHED_VALUE'
  /** The client was closed (`dispose()`). */
  | 'ERR_MEMCACHED_CLOSED';

/** A Memcached failure. The limiter treats it as a store failure (see `onStoreError`). */
export class MemcachedError extends Error {
  readonly code: MemcachedErrorCode;

  constructor(code: MemcachedErrorCode, message: string, options?: { cause?: unknown }) {
    super(`[ratekit/memcached] ${message}`, options);
    this.name = 'MemcachedError';
    this.code = code;
  }
}

/** One meta reply: its code (`HD`, `VA`, `EN`, `NF`, `NS`, `EX`, or `CLIENT_ERROR` for the one client error the store expects) and its flags. */
export interface MetaReply {
  readonly code: string;
  /** Return flags, e.g. `c123` for a CAS value of 123. */
  readonly flags: readonly string[];
  /** The data block of a `VA` reply. */
  readonly value: string | undefined;
}

/** The client error `ma` gives on a value that is not a number; the store then falls back to compare-and-set. */
export const NON_NUMERIC = 'cannot increment or decrement non-numeric value';

/** The token of return flag `flag` (e.g. `c` → the CAS value), or undefined. */
export function replyFlag(reply: MetaReply, flag: string): string | undefined {
  for (const token of reply.flags) if (token.startsWith(flag)) return token.slice(flag.length);
  return undefined;
}

/** A server address. */
export interface ServerAddress {
  readonly host: string;
  readonly port: number;
}

/** Options of {@link MemcachedClient}. */
export interface MemcachedClientOptions {
  readonly servers: readonly ServerAddress[];
  /** Per command, from the call until the reply, in ms (connecting included). */
  readonly timeoutMs: number;
  /** Connections per server; a key always uses the same one, so its commands stay in order. */
  readonly connections: number;
  /** After a failed connection attempt, commands to that server fail at once for this many ms instead of trying again. */
  readonly reconnectDelayMs: number;
}

/**
 * Parses `host:port`, `[ipv6]:port` or `host` (port 11211).
 *
 * @throws {Error} when the port is not an integer from 1 to 65535 or the host is empty.
 */
export function parseServer(text: string): ServerAddress {
  const match = /^(?:\[([^\]]+)\]|([^:\s]+))(?::(\d+))?$/.exec(text.trim());
  const host = match?.[1] ?? match?.[2];
  const port = match?.[3] === undefined ? 11211 : Number(match[3]);
  if (match === null || host === undefined || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new Error(`Expected "host:port", "[ipv6]:port" or "host", got ${JSON.stringify(text)}`);
  }
  return { host, port };
}

/**
 * The client: `send(route, command, data)` writes one meta command to the
 * connection chosen by `route` (a 32-bit hash) and resolves with its reply.
 */
export class MemcachedClient {
  private readonly pools: Connection[][];
  private closed = false;

  constructor(private readonly options: MemcachedClientOptions) {
    this.pools = options.servers.map((server) => Array.from({ length: options.connections }, () => new Connection(server, options)));
  }

  /**
   * Sends `command` (a meta command line without `\r\n`, e.g. `mg <key> v c`)
   * and, for `ms`, its data block. Commands with the same `route` go to the
   * same connection, in call order.
   */
  send(route: number, command: string, data?: string): Promise<MetaReply> {
    if (this.closed) return Promise.reject(new MemcachedError('ERR_MEMCACHED_CLOSED', 'The client is closed'));
    const pool = this.pools[pickServer(route, this.pools.length)]!;
    const connection = pool[(route >>> 16) % pool.length]!;
    return connection.send(data === undefined ? `${command}\r\n` : `${command}\r\n${data}\r\n`);
  }

  /** The server address a route goes to. */
  serverFor(route: number): ServerAddress {
    return this.options.servers[pickServer(route, this.pools.length)]!;
  }

  /** Waits (at most `timeoutMs`) for commands in flight, then closes every connection. Later commands reject. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.pools.flat().map((connection) => connection.close()));
  }
}

/** Rendezvous hashing of a 32-bit route over `count` servers: adding a server moves only the keys that go to it. */
function pickServer(route: number, count: number): number {
  if (count === 1) return 0;
  let best = 0;
  let bestScore = -1;
  for (let i = 0; i < count; i++) {
    const score = mix32(route ^ Math.imul(i + 1, 0x9e3779b1));
    if (score > bestScore) {
      bestScore = score;
      best = i;
    }
  }
  return best;
}

/** A 32-bit integer finaliser (murmur3 fmix32), as an unsigned number. */
function mix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

interface Pending {
  readonly resolve: (reply: MetaReply) => void;
  readonly reject: (error: Error) => void;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** When it was sent (or queued for sending), `Date.now()`. */
  readonly sentAt: number;
  /** Resolved, rejected or timed out: a reply that still comes for it is read and dropped. */
  settled: boolean;
}

/** One socket to one server, with its queue of commands awaiting replies. */
class Connection {
  private socket: Socket | undefined;
  private connected = false;
  /** Written (or queued to be written once connected), awaiting replies, oldest first. */
  private readonly pending: Pending[] = [];
  /** Commands waiting for the connection to open. */
  private outbox: string[] = [];
  private buffer: Buffer = Buffer.alloc(0);
  private lastFailure: { at: number; error: MemcachedError } | undefined;
  private lastDataAt = 0;
  private corked = false;
  private closing: Promise<void> | undefined;
  private drained: (() => void) | undefined;

  constructor(
    private readonly server: ServerAddress,
    private readonly options: MemcachedClientOptions,
  ) {}

  private get name(): string {
    return `${this.server.host}:${this.server.port}`;
  }

  send(text: string): Promise<MetaReply> {
    const failure = this.lastFailure;
    if (this.socket === undefined && failure !== undefined && Date.now() - failure.at < this.options.reconnectDelayMs) {
      return Promise.reject(failure.error);
    }
    return new Promise<MetaReply>((resolve, reject) => {
      const entry: Pending = { resolve, reject, timer: undefined, sentAt: Date.now(), settled: false };
      entry.timer = setTimeout(() => this.timeout(entry), this.options.timeoutMs);
      this.pending.push(entry);
      const socket = this.socket ?? this.open();
      if (this.pending.length === 1) socket.ref();
      if (!this.connected) {
        this.outbox.push(text);
        return;
      }
      if (!this.corked) {
        this.corked = true;
        socket.cork();
        process.nextTick(() => {
          this.corked = false;
          socket.uncork();
        });
      }
      socket.write(text);
    });
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.pending.length > 0) {
        await new Promise<void>((resolve) => {
          this.drained = resolve;
          setTimeout(resolve, this.options.timeoutMs).unref();
        });
      }
      this.reset(new MemcachedError('ERR_MEMCACHED_CLOSED', `The client was closed with commands in flight to ${this.name}`));
    })();
    return this.closing;
  }

  private open(): Socket {
    const socket = new Socket();
    this.socket = socket;
    this.connected = false;
    this.buffer = Buffer.alloc(0);
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 30_000);
    socket.on('data', (chunk: Buffer) => this.receive(socket, chunk));
    socket.on('error', (error) => this.fail(socket, error));
    socket.on('close', () => this.fail(socket, new Error('the server closed the connection')));
    socket.connect(this.server.port, this.server.host, () => {
      if (this.socket !== socket) return;
      this.connected = true;
      this.lastFailure = undefined;
      if (this.outbox.length > 0) socket.write(this.outbox.join(''));
      this.outbox = [];
    });
    return socket;
  }

  /** The socket failed or closed: reject everything in flight; the next command reconnects. */
  private fail(socket: Socket, cause: Error): void {
    if (this.socket !== socket) return;
    const wasConnected = this.connected;
    const error = new MemcachedError('ERR_MEMCACHED_CONNECTION', wasConnected ? `Lost the connection to ${this.name}: ${cause.message}` : `Could not connect to ${this.name}: ${cause.message}`, {
      cause,
    });
    if (!wasConnected) this.lastFailure = { at: Date.now(), error };
    this.reset(error);
  }

  private reset(error: MemcachedError): void {
    const socket = this.socket;
    this.socket = undefined;
    this.connected = false;
    this.outbox = [];
    this.buffer = Buffer.alloc(0);
    socket?.destroy();
    const entries = this.pending.splice(0);
    for (const entry of entries) this.settle(entry, undefined, error);
    this.drained?.();
  }

  private timeout(entry: Pending): void {
    entry.timer = undefined;
    if (entry.settled) return;
    if (!this.connected) {
      const failed = new MemcachedError('ERR_MEMCACHED_CONNECTION', `Could not connect to ${this.name} within ${this.options.timeoutMs} ms`);
      this.lastFailure = { at: Date.now(), error: failed };
      this.reset(failed);
      return;
    }
    const error = new MemcachedError('ERR_MEMCACHED_TIMEOUT', `No reply from ${this.name} within ${this.options.timeoutMs} ms`);
    if (this.lastDataAt < entry.sentAt) {
      // Nothing at all has come back since this command was sent: the server is gone or hung.
      this.reset(error);
      return;
    }
    // The server is answering earlier commands, just slowly: drop this reply when it comes, keep the others in order.
    entry.settled = true;
    entry.reject(error);
  }

  private settle(entry: Pending, reply: MetaReply | undefined, error?: Error): void {
    if (entry.timer !== undefined) clearTimeout(entry.timer);
    if (entry.settled) return;
    entry.settled = true;
    if (error !== undefined) entry.reject(error);
    else entry.resolve(reply!);
  }

  private receive(socket: Socket, chunk: Buffer): void {
    if (this.socket !== socket) return;
    this.lastDataAt = Date.now();
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    let offset = 0;
    for (;;) {
      const lineEnd = this.buffer.indexOf('\r\n', offset);
      if (lineEnd === -1) break;
      const line = this.buffer.toString('latin1', offset, lineEnd);
      let value: string | undefined;
      let next = lineEnd + 2;
      if (line.startsWith('VA ')) {
        const size = Number(line.slice(3, line.indexOf(' ', 3) === -1 ? undefined : line.indexOf(' ', 3)));
        if (!Number.isSafeInteger(size) || size < 0) return this.protocolError(`a bad VA line ${JSON.stringify(line)}`);
        if (this.buffer.length < next + size + 2) break;
        value = this.buffer.toString('utf8', next, next + size);
        next += size + 2;
      }
      offset = next;
      const entry = this.pending.shift();
      if (entry === undefined) return this.protocolError(`an unexpected reply ${JSON.stringify(line)}`);
      if (this.pending.length === 0) {
        socket.unref();
        this.drained?.();
      }
      this.dispatch(entry, line, value);
      if (this.socket !== socket) return;
    }
    this.buffer = offset === this.buffer.length ? Buffer.alloc(0) : this.buffer.subarray(offset);
  }

  private dispatch(entry: Pending, line: string, value: string | undefined): void {
    if (line.startsWith('SERVER_ERROR')) {
      this.settle(entry, undefined, new MemcachedError('ERR_MEMCACHED_SERVER', `${this.name} answered ${line}`));
      return;
    }
    if (line === `CLIENT_ERROR ${NON_NUMERIC}`) {
      this.settle(entry, { code: 'CLIENT_ERROR', flags: [], value: undefined });
      return;
    }
    if (line === 'ERROR' || line.startsWith('CLIENT_ERROR')) {
      // The server may now read the rest of the stream out of step: start a new connection.
      this.settle(entry, undefined, new MemcachedError('ERR_MEMCACHED_PROTOCOL', `${this.name} refused a command: ${line}`));
      this.reset(new MemcachedError('ERR_MEMCACHED_PROTOCOL', `The connection to ${this.name} was reset after the server answered ${line}`));
      return;
    }
    const tokens = line.split(' ');
    const code = tokens[0]!;
    this.settle(entry, { code, flags: code === 'VA' ? tokens.slice(2) : tokens.slice(1), value });
  }

  private protocolError(what: string): void {
    this.reset(new MemcachedError('ERR_MEMCACHED_PROTOCOL', `${this.name} sent ${what}; the connection was reset`));
  }
}
