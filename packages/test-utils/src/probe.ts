import { createConnection } from 'node:net';

/**
 * Resolves once a server on 127.0.0.1:`port` answers `request` (one line) with
 * a line starting with `expected`, polling every 25 ms; rejects after
 * `timeoutMs`, or stops trying once `signal` aborts. The starters use it to
 * wait for a server they spawned to be ready (Redis `PING`, Memcached `mn`).
 */
export async function waitForReply(port: number, request: string, expected: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await replies(port, request, expected)) return;
    if (signal?.aborted) throw new Error('stopped waiting');
    if (Date.now() > deadline) throw new Error(`no ${expected} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** One attempt: connects, sends `request`, and tells whether the first reply line starts with `expected`. */
function replies(port: number, request: string, expected: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    let reply = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write(`${request}\r\n`));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      if (reply.includes('\r\n')) done(reply.startsWith(expected));
    });
  });
}
