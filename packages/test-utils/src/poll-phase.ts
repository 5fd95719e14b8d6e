import { createConnection, createServer, type Socket } from 'node:net';

/**
 * Calls `onData(i)` for i = 0…n−1 from n separate I/O callbacks of one poll
 * phase of the event loop, as a server does for n requests that arrived
 * together: n loopback sockets are connected, then one byte is written on
 * each in one synchronous run, so every server socket is readable at the next
 * poll, and each `'data'` callback runs in that poll phase (no `setImmediate`
 * in between: the check phase comes after). Resolves with what each call
 * returned (awaited), in order of i.
 *
 * @example
 * ```ts
 * const decisions = await inOnePollPhase(5, () => store.evaluate(request));
 * ```
 */
export async function inOnePollPhase<T>(n: number, onData: (i: number) => T | Promise<T>): Promise<T[]> {
  const accepted: Socket[] = [];
  const server = createServer((socket) => accepted.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const clients: Socket[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const client = createConnection({ port, host: '127.0.0.1', noDelay: true });
      await new Promise<void>((resolve, reject) => client.once('connect', resolve).once('error', reject));
      clients.push(client);
    }
    while (accepted.length < n) await new Promise((resolve) => setImmediate(resolve));
    // Each accepted socket tells which client it is from the byte it reads.
    const results = new Array<Promise<T>>(n);
    const all = new Promise<void>((resolve, reject) => {
      let seen = 0;
      for (const socket of accepted) {
        socket.once('data', (data) => {
          const i = data[0]!;
          try {
            results[i] = Promise.resolve(onData(i));
          } catch (error) {
            reject(error);
            return;
          }
          if (++seen === n) resolve();
        });
      }
    });
    clients.forEach((client, i) => client.write(Buffer.from([i])));
    await all;
    return await Promise.all(results);
  } finally {
    for (const socket of [...clients, ...accepted]) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
}
