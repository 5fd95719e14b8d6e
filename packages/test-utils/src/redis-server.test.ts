import { createConnection } from 'node:net';
import { findBinary } from './services.js';
import { startRedis } from './redis-server.js';

/** Sends one inline command and resolves with the raw reply once it has `lines` lines. */
function command(port: number, line: string, lines = 1): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    let reply = '';
    socket.once('error', reject);
    socket.once('connect', () => socket.write(`${line}\r\n`));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      if (reply.split('\r\n').length > lines) {
        socket.destroy();
        resolve(reply);
      }
    });
  });
}

const binary = findBinary('redis-server');
if (binary === undefined) process.stderr.write('[ratekit tests] skipped "startRedis": redis-server not found on PATH\n');
(binary === undefined ? describe.skip : describe)('startRedis', () => {
  describe('with the defaults', () => {
    it('starts a redis-server on a free loopback port without persistence, and stops it', async () => {
      const redis = await startRedis();
      try {
        expect(redis.url).toBe(`redis://127.0.0.1:${redis.port}`);
        expect(await command(redis.port, 'PING')).toBe('+PONG\r\n');
        expect(await command(redis.port, 'CONFIG GET save', 5)).toBe('*2\r\n$4\r\nsave\r\n$0\r\n\r\n');
        expect(await command(redis.port, 'CONFIG GET appendonly', 5)).toBe('*2\r\n$10\r\nappendonly\r\n$2\r\nno\r\n');
        expect(await command(redis.port, 'CONFIG GET bind', 5)).toBe('*2\r\n$4\r\nbind\r\n$9\r\n127.0.0.1\r\n');
      } finally {
        await redis.stop();
      }
      await expect(command(redis.port, 'PING')).rejects.toThrow(/ECONNREFUSED/);
      await redis.stop(); // a second stop is harmless
    });
  });

  describe('when the server cannot start', () => {
    it('rejects with its output', async () => {
      await expect(startRedis({ args: ['--no-such-option', 'x'] })).rejects.toThrow(/Could not start .*redis-server[\s\S]*no-such-option/i);
    });
  });
});
