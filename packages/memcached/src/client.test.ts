import { createServer, type Server, type Socket } from 'node:net';
import { describeWithService, memcachedService } from '@ratekit/test-utils';
import { MemcachedClient, type MemcachedClientOptions, MemcachedError, parseServer, replyFlag } from './client.js';

/**
 * A fake server: calls `answer(line, socket)` for each command line it
 * receives (data blocks of `ms` are skipped), so a test decides what, when
 * and whether to reply.
 */
async function fakeServer(answer: (line: string, socket: Socket) => void): Promise<{ port: number; connections: () => number; close: () => Promise<void> }> {
  let connections = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let buffer = '';
    socket.on('data', (chunk) => {
      buffer += chunk.toString('latin1');
      for (let end = buffer.indexOf('\r\n'); end !== -1; end = buffer.indexOf('\r\n')) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const size = /^ms \S+ (\d+)/.exec(line);
        if (size !== null) buffer = buffer.slice(Number(size[1]) + 2);
        answer(line, socket);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

const clientFor = (port: number, options: Partial<MemcachedClientOptions> = {}) =>
  new MemcachedClient({ servers: [{ host: '127.0.0.1', port }], timeoutMs: 1_000, connections: 1, reconnectDelayMs: 0, ...options });

/** The key of a command line (its second word). */
const keyOf = (line: string) => line.split(' ')[1]!;

describe('parseServer', () => {
  it.each([
    ['cache:11311', { host: 'cache', port: 11311 }],
    ['10.0.0.7', { host: '10.0.0.7', port: 11211 }],
    ['[::1]:11212', { host: '::1', port: 11212 }],
    [' 127.0.0.1:1 ', { host: '127.0.0.1', port: 1 }],
  ])('reads %j', (text, expected) => {
    expect(parseServer(text)).toEqual(expected);
  });

  it.each(['', 'host:0', 'host:65536', 'host:port', '::1:11211', 'a b:1'])('refuses %j', (text) => {
    expect(() => parseServer(text)).toThrow(/Expected "host:port", "\[ipv6\]:port" or "host"/);
  });
});

describe('MemcachedClient', () => {
  describe('reading replies', () => {
    it('matches replies to commands in order, whatever the packet boundaries', async () => {
      const server = await fakeServer((line, socket) => {
        const key = keyOf(line);
        // The fake reads and writes bytes as latin1, so the key's UTF-8 bytes go back as they came.
        const reply = key === 'missing' ? 'EN\r\n' : `VA ${key.length} c42 t-1\r\n${key}\r\n`;
        // One byte per write: every boundary inside a reply is exercised.
        for (const byte of Buffer.from(reply, 'latin1')) socket.write(Buffer.from([byte]));
      });
      const client = clientFor(server.port);
      const keys = ['alpha', 'missing', 'ünïcödé', 'gamma'];
      const replies = await Promise.all(keys.map((key) => client.send(0, `mg ${key} v c t`)));
      expect(replies.map((r) => [r.code, r.value, replyFlag(r, 'c'), replyFlag(r, 't')])).toEqual([
        ['VA', 'alpha', '42', '-1'],
        ['EN', undefined, undefined, undefined],
        ['VA', 'ünïcödé', '42', '-1'],
        ['VA', 'gamma', '42', '-1'],
      ]);
      await client.close();
      await server.close();
    });
  });

  describe('when the server does not answer', () => {
    it('rejects within the timeout, drops the silent connection, and opens a new one for the next command', async () => {
      let silent = true;
      const server = await fakeServer((line, socket) => {
        if (!silent) socket.write('HD\r\n');
      });
      // 250 ms: the command after the timeout opens a new connection first, which on a loaded
      // machine took over 100 ms (a CI run beside a valgrind run).
      const client = clientFor(server.port, { timeoutMs: 250 });
      const started = Date.now();
      await expect(client.send(0, 'mg k v')).rejects.toMatchObject({ name: 'MemcachedError', code: 'ERR_MEMCACHED_TIMEOUT' });
      expect(Date.now() - started).toBeLessThan(1_000);
      silent = false;
      await expect(client.send(0, 'mg k v')).resolves.toMatchObject({ code: 'HD' });
      expect(server.connections()).toBe(2);
      await client.close();
      await server.close();
    });

    it('when the server is slow but answering, a command that times out is dropped and the replies after it still go to the right commands', async () => {
      // In order, as Memcached answers: a at once, b after 150 ms, c and d after 450 ms
      // (past their 300 ms timeout, but the connection was not silent meanwhile), e right after d.
      const delays: Record<string, number> = { a: 0, b: 150, c: 450, d: 450, e: 0 };
      let previous = Promise.resolve();
      const server = await fakeServer((line, socket) => {
        const key = keyOf(line);
        const at = Date.now() + delays[key]!;
        previous = previous.then(async () => {
          await new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));
          socket.write(`VA ${key.length}\r\n${key}\r\n`);
        });
      });
      const client = clientFor(server.port, { timeoutMs: 300 });
      const results = await Promise.allSettled(['a', 'b', 'c', 'd'].map((key) => client.send(0, `mg ${key} v`)));
      expect(results.map((r) => (r.status === 'fulfilled' ? r.value.value : (r.reason as MemcachedError).code))).toEqual(['a', 'b', 'ERR_MEMCACHED_TIMEOUT', 'ERR_MEMCACHED_TIMEOUT']);
      // The late replies to c and d are read and dropped; e gets its own, on the same connection.
      const e = await client.send(0, 'mg e v');
      expect(e.value).toBe('e');
      expect(server.connections()).toBe(1);
      await client.close();
      await server.close();
    });
  });

  describe('when the server answers with an error', () => {
    it('passes the non-numeric increment error to the caller and keeps the connection', async () => {
      const server = await fakeServer((line, socket) => {
        socket.write(line.startsWith('ma') ? 'CLIENT_ERROR cannot increment or decrement non-numeric value\r\n' : 'HD\r\n');
      });
      const client = clientFor(server.port);
      expect((await client.send(0, 'ma k v')).code).toBe('CLIENT_ERROR');
      expect((await client.send(0, 'mg k')).code).toBe('HD');
      expect(server.connections()).toBe(1);
      await client.close();
      await server.close();
    });

    it('rejects a SERVER_ERROR with ERR_MEMCACHED_SERVER', async () => {
      const server = await fakeServer((_, socket) => socket.write('SERVER_ERROR object too large for cache\r\n'));
      const client = clientFor(server.port);
      await expect(client.send(0, 'ms k 2 T1', 'ab')).rejects.toMatchObject({ code: 'ERR_MEMCACHED_SERVER', message: expect.stringContaining('object too large') });
      await client.close();
      await server.close();
    });

    it('on ERROR or another client error, rejects everything in flight and starts a new connection', async () => {
      const server = await fakeServer((line, socket) => {
        if (keyOf(line) === 'bad') socket.write('CLIENT_ERROR bad command line format\r\n');
        else if (keyOf(line) === 'late') setTimeout(() => socket.write('HD\r\n'), 50);
        else socket.write('HD\r\n');
      });
      const client = clientFor(server.port);
      const bad = client.send(0, 'mg bad');
      const late = client.send(0, 'mg late');
      await expect(bad).rejects.toMatchObject({ code: 'ERR_MEMCACHED_PROTOCOL', message: expect.stringContaining('bad command line format') });
      await expect(late).rejects.toMatchObject({ code: 'ERR_MEMCACHED_PROTOCOL', message: expect.stringContaining('was reset') });
      expect((await client.send(0, 'mg good')).code).toBe('HD');
      expect(server.connections()).toBe(2);
      await client.close();
      await server.close();
    });
  });

  describe('when the server is gone', () => {
    it('rejects with ERR_MEMCACHED_CONNECTION, fails fast for reconnectDelayMs, then tries again', async () => {
      const server = await fakeServer((_, socket) => socket.write('HD\r\n'));
      const { port } = server;
      await server.close();
      const client = clientFor(port, { reconnectDelayMs: 200 });
      await expect(client.send(0, 'mg k')).rejects.toMatchObject({ code: 'ERR_MEMCACHED_CONNECTION', message: expect.stringMatching(/Could not connect to 127\.0\.0\.1:\d+/) });
      const started = performance.now();
      await expect(client.send(0, 'mg k')).rejects.toMatchObject({ code: 'ERR_MEMCACHED_CONNECTION' });
      // Fails at once, without waiting for a connection attempt (slack for a busy machine, well under reconnectDelayMs).
      expect(performance.now() - started).toBeLessThan(100);
      await new Promise((resolve) => setTimeout(resolve, 250));
      const again = await fakeServer((_, socket) => socket.write('HD\r\n'));
      const moved = clientFor(again.port, { reconnectDelayMs: 200 });
      await expect(moved.send(0, 'mg k')).resolves.toMatchObject({ code: 'HD' });
      await Promise.all([client.close(), moved.close(), again.close()]);
    });

    it('rejects the commands in flight when the connection drops, and reconnects for the next one', async () => {
      let drop = true;
      const server = await fakeServer((_, socket) => {
        if (drop) socket.destroy();
        else socket.write('HD\r\n');
      });
      const client = clientFor(server.port);
      await expect(client.send(0, 'mg k')).rejects.toMatchObject({ code: 'ERR_MEMCACHED_CONNECTION', message: expect.stringContaining('Lost the connection') });
      drop = false;
      await expect(client.send(0, 'mg k')).resolves.toMatchObject({ code: 'HD' });
      await client.close();
      await server.close();
    });
  });

  describe('close()', () => {
    it('waits for the replies in flight, then refuses new commands', async () => {
      const server = await fakeServer((_, socket) => setTimeout(() => socket.write('HD\r\n'), 30));
      const client = clientFor(server.port);
      const inFlight = client.send(0, 'mg k');
      await client.close();
      await expect(inFlight).resolves.toMatchObject({ code: 'HD' });
      await expect(client.send(0, 'mg k')).rejects.toMatchObject({ code: 'ERR_MEMCACHED_CLOSED' });
      await server.close();
    });
  });
});

describeWithService(memcachedService, 'MemcachedClient on a real Memcached', (server) => {
  it('pipelines thousands of commands on one connection and reads every reply', async () => {
    const client = new MemcachedClient({ servers: server().url.split(',').map(parseServer), timeoutMs: 5_000, connections: 1, reconnectDelayMs: 0 });
    const prefix = `client-test-${process.pid}-${Date.now()}`;
    const n = 2_000;
    const stored = await Promise.all(Array.from({ length: n }, (_, i) => client.send(0, `ms ${prefix}-${i} ${String(i).length} T60`, String(i))));
    expect(stored.every((r) => r.code === 'HD')).toBe(true);
    const read = await Promise.all(Array.from({ length: n }, (_, i) => client.send(0, `mg ${prefix}-${i} v`)));
    expect(read.map((r) => r.value)).toEqual(Array.from({ length: n }, (_, i) => String(i)));
    const incremented = await client.send(0, `ma ${prefix}-7 D5 v`);
    expect(incremented.value).toBe('12');
    await client.close();
  });
});
