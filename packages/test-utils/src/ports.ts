import { createServer } from 'node:net';

/** A loopback TCP port that was free a moment ago (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * Runs `start` on `port`, or on a free port when `port` is undefined. A port
 * the OS picked can be taken again before the server binds it, so a failed
 * start on a picked port is retried on another one (3 tries in all); a failed
 * start on a given port is not retried. Rejects with the last error.
 */
export async function onFreePort<T>(port: number | undefined, start: (port: number) => Promise<T>): Promise<T> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await start(port ?? (await freePort()));
    } catch (error) {
      lastError = error;
      if (port !== undefined) break;
    }
  }
  throw lastError;
}
