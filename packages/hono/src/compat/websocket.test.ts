import type { Context } from 'hono';
import type { WSContext, WSEvents, WSMessageReceive } from 'hono/ws';
import { MemoryStore } from './memory-store.js';
import { webSocketLimiter } from './websocket.js';

/** A socket that records what the limiter and the app do to it. */
function recordingSocket() {
  const log: string[] = [];
  const ws = { send: (data: string) => void log.push(`send ${data}`), close: (code?: number, reason?: string) => void log.push(`close ${code} ${reason}`) } as unknown as WSContext;
  return { ws, log };
}

/** The upgrade request's context: only `set` is used (for the context variables). */
function upgradeContext() {
  const vars = new Map<string, unknown>();
  return { c: { set: (name: string, value: unknown) => void vars.set(name, value) } as unknown as Context, vars };
}

const message = (data: string) => new MessageEvent<WSMessageReceive>('message', { data });

describe('webSocketLimiter (hono-rate-limiter 0.5.4 drop-in)', () => {
  it('passes `limit` messages per key to onMessage, then closes the socket with 1008 and the message', async () => {
    const limit = webSocketLimiter({ keyGenerator: () => 'client', limit: 2, store: new MemoryStore() });
    const { ws, log } = recordingSocket();
    const { c, vars } = upgradeContext();
    const events: WSEvents = await limit(() => ({ onMessage: (event, socket) => socket.send(`echo ${String(event.data)}`) }))(c);
    for (const data of ['a', 'b', 'c']) await Promise.resolve(events.onMessage?.(message(data), ws)); // our onMessage is async; Hono types it as returning void
    expect(log).toEqual(['send echo a', 'send echo b', 'close 1008 Too many requests, please try again later.']);
    expect(vars.get('rateLimit')).toMatchObject({ limit: 2, used: 3, remaining: 0 });
  });

  it('gives a hit back after a message handled without error, with skipSuccessfulRequests', async () => {
    const store = new MemoryStore();
    const limit = webSocketLimiter({ keyGenerator: () => 'client', limit: 1, store, skipSuccessfulRequests: true });
    const { ws, log } = recordingSocket();
    const events = await limit(() => ({ onMessage: (event, socket) => socket.send(String(event.data)) }))(upgradeContext().c);
    for (const data of ['a', 'b', 'c']) await Promise.resolve(events.onMessage?.(message(data), ws)); // our onMessage is async; Hono types it as returning void
    expect(log).toEqual(['send a', 'send b', 'send c']);
    expect(store.get('client')?.totalHits).toBe(0);
  });

  it('refuses a missing keyGenerator when built', () => {
    expect(() => webSocketLimiter({} as never)).toThrow(expect.objectContaining({ code: 'ERR_RATEKIT_INVALID_OPTION' }));
  });
});
