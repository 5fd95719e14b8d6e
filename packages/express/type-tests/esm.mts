// An ESM app: default and named imports, as express-rate-limit's README writes them.
import express, { type Request } from 'express';
import rateLimit, {
  type ClientRateLimitInfo,
  type IncrementResponse,
  ipKeyGenerator,
  MemoryStore,
  type Options,
  rateLimit as namedRateLimit,
  type RateLimitInfo,
  slowDown,
  type Store,
  type Validations,
} from '@ratekit/express';
import type { Validations as ErlValidations } from 'express-rate-limit';

const app = express();
app.use(rateLimit({ windowMs: 60_000, limit: 100, standardHeaders: 'draft-7', legacyHeaders: false, ipv6Subnet: 56 }));
app.use(namedRateLimit({ limit: (_req: Request) => 5, message: { error: 'slow down' }, statusCode: 429 }));
app.use(slowDown({ windowMs: 60_000, delayAfter: 1, delayMs: () => 500 }));

/** A custom store, written against express-rate-limit's contract. */
class CountingStore implements Store {
  hits = new Map<string, number>();
  windowMs = 60_000;
  init(options: Options): void {
    this.windowMs = options.windowMs;
  }
  async increment(key: string): Promise<IncrementResponse> {
    const totalHits = (this.hits.get(key) ?? 0) + 1;
    this.hits.set(key, totalHits);
    return { totalHits, resetTime: new Date(Date.now() + this.windowMs) };
  }
  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    const totalHits = this.hits.get(key);
    return totalHits === undefined ? undefined : { totalHits, resetTime: undefined };
  }
  async decrement(key: string): Promise<void> {
    this.hits.set(key, (this.hits.get(key) ?? 1) - 1);
  }
  async resetKey(key: string): Promise<void> {
    this.hits.delete(key);
  }
}
app.use(rateLimit({ store: new CountingStore(), keyGenerator: (req) => ipKeyGenerator(req.ip ?? '') }));
app.use(rateLimit({ store: new MemoryStore() }));

// express-rate-limit's MemoryStore signature, `new MemoryStore(validations)`, beside ratekit's options.
declare const erlValidations: ErlValidations;
declare const validations: Validations;
app.use(rateLimit({ store: new MemoryStore(erlValidations) }));
app.use(rateLimit({ store: new MemoryStore(validations) }));
app.use(rateLimit({ store: new MemoryStore({ maxKeys: 50_000, now: () => Date.now() }) }));
// @ts-expect-error the window is the limiter's `windowMs`, not the store's
new MemoryStore({ windowMs: 60_000 });
// @ts-expect-error `maxKeys` is a number
new MemoryStore({ maxKeys: '50000' });

app.get('/', (req, res) => {
  const info = (req as Request & { rateLimit?: RateLimitInfo }).rateLimit;
  res.json({ remaining: info?.remaining });
});

export type Checks = Validations;

// @ts-expect-error a store needs increment() (and decrement, resetKey)
rateLimit({ store: { get: async () => undefined } });
// @ts-expect-error `windowMs` is a number of milliseconds
rateLimit({ windowMs: '1 minute' });
