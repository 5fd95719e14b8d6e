/**
 * The middleware's return value, as express-rate-limit's: a promise that
 * settles once the request has been passed on or answered, and, when the
 * response has already ended by then, once the skip options have taken the
 * hit back. Code that awaits the middleware (tests, wrappers) sees the
 * decrement. Each case runs against ours and the real express-rate-limit.
 */
import { EventEmitter } from 'node:events';
import type { NextFunction, Request, Response } from 'express';
import { rateLimit as realRateLimit } from 'express-rate-limit';
import { rateLimit } from '../rate-limit.js';
import type { ClientRateLimitInfo, IncrementCallback, RateLimitOptions } from '../types.js';

const quiet = { warn: () => undefined, error: () => undefined };

class ModernStore {
  counter = 0;
  decremented = false;
  async increment(): Promise<ClientRateLimitInfo> {
    this.counter += 1;
    return { totalHits: this.counter, resetTime: undefined };
  }
  async decrement(): Promise<void> {
    this.counter -= 1;
    this.decremented = true;
  }
  async resetKey(): Promise<void> {}
}

class LegacyStore {
  counter = 0;
  decremented = false;
  incr(_key: string, callback: IncrementCallback): void {
    this.counter += 1;
    callback(undefined, this.counter, undefined);
  }
  decrement(): void {
    this.counter -= 1;
    this.decremented = true;
  }
  resetKey(): void {}
}

class CompatStore extends ModernStore {
  incr(_key: string, callback: IncrementCallback): void {
    this.counter += 1;
    callback(undefined, this.counter, undefined);
  }
}

/** A request and a response that ends (emits `finish`) the moment something is sent, as a mock in a test would. */
function exchange() {
  const req = { ip: '192.0.2.1', app: { get: () => false }, headers: {}, socket: { remoteAddress: '192.0.2.1' } } as unknown as Request;
  const res = Object.assign(new EventEmitter(), {
    statusCode: 200,
    headersSent: false,
    writableEnded: false,
    setHeader: () => undefined,
    status(code: number) {
      res.statusCode = code;
      return res;
    },
    send() {
      res.writableEnded = true;
      res.emit('finish');
      return res;
    },
  });
  return { req, res: res as unknown as Response };
}

const implementations: Array<[string, (options: RateLimitOptions) => (req: Request, res: Response, next: NextFunction) => unknown]> = [
  ['@ratekit/express', (options) => rateLimit(options)],
  ['express-rate-limit', (options) => realRateLimit(options as never)],
];

describe.each(implementations)('awaiting the middleware (%s)', (_name, make) => {
  it.each([
    ['modern', () => new ModernStore()],
    ['legacy', () => new LegacyStore()],
    ['compat', () => new CompatStore()],
  ])('sees the decrement of skipFailedRequests once a refused request is answered (%s store)', async (_kind, makeStore) => {
    const store = makeStore();
    const limiter = make({ limit: 0, skipFailedRequests: true, store: store, logger: quiet, validate: false });
    const { req, res } = exchange();
    const next = jest.fn();
    await limiter(req, res, next);
    expect(next).not.toHaveBeenCalled();
    expect(res.statusCode).toBe(429);
    expect(store.decremented).toBe(true);
    expect(store.counter).toBe(0);
  });

  it('settles once next() has been called, for an admitted request', async () => {
    const limiter = make({ limit: 5, logger: quiet, validate: false });
    const { req, res } = exchange();
    const next = jest.fn();
    await limiter(req, res, next);
    expect(next).toHaveBeenCalledTimes(1);
    expect(next).toHaveBeenCalledWith();
  });

  it('settles, without rejecting, once a store failure has gone to next(err)', async () => {
    const store = { increment: async () => Promise.reject(new Error('down')), decrement: async () => undefined, resetKey: async () => undefined };
    const limiter = make({ store: store, logger: quiet, validate: false });
    const { req, res } = exchange();
    const next = jest.fn();
    await expect(limiter(req, res, next)).resolves.toBeUndefined();
    expect(next).toHaveBeenCalledWith(expect.objectContaining({ message: 'down' }));
  });
});
