/**
 * For this package's tests only (not exported): the three kinds of client on one real Redis
 * (ioredis, node-redis over TCP; `@upstash/redis` over HTTP through a local Upstash REST
 * endpoint), unique prefixes, and a timeline runner on a fixed clock.
 *
 * @module
 */
import { startUpstashRestServer, type UpstashRestServer } from '@ratekit/test-utils';
import { Redis as Upstash } from '@upstash/redis';
import { Redis as IORedis } from 'ioredis';
import { createClient } from 'redis';
import { Ratelimit, type RatelimitConfig } from './ratelimit.js';
import type { Algorithm, RatelimitResponse } from './types.js';

type NodeRedis = ReturnType<typeof createClient>;

/** The clients of one test file, each kind on the same Redis. */
export interface Clients {
  ioredis: IORedis;
  nodeRedis: NodeRedis;
  rest: UpstashRestServer;
  upstash: Upstash;
}

/** Opens every kind of client on `url`. */
export async function openClients(url: string): Promise<Clients> {
  const ioredis = new IORedis(url);
  const nodeRedis: NodeRedis = createClient({ url });
  await nodeRedis.connect();
  const rest = await startUpstashRestServer({ sendCommand: (args) => nodeRedis.sendCommand(args) });
  const upstash = new Upstash({ url: rest.url, token: rest.token, retry: false, enableTelemetry: false });
  return { ioredis, nodeRedis, rest, upstash };
}

/** Closes what {@link openClients} opened. */
export async function closeClients(clients: Clients): Promise<void> {
  await clients.rest.close();
  await clients.nodeRedis.quit();
  await clients.ioredis.quit();
}

let sequence = 0;
/** A key prefix no other test (or run) uses. */
export function uniquePrefix(label: string): string {
  return `ratekit-upstash-test:${label}:${process.pid}:${Date.now()}:${sequence++}`;
}

/** A clock the test moves. */
export class FixedClock {
  constructor(public ms: number) {}
  readonly now = (): number => this.ms;
}

/** A start instant on a whole minute (so window numbers are easy to read). */
export const T0 = 1_764_000_000_000;

/** One request of a timeline: at `T0 + at` ms, taking `rate` tokens; what `limit()` answers. */
export interface TimelineRow {
  at: number;
  rate?: number;
  success: boolean;
  remaining: number;
  reset: number;
}

/** Runs `rows` in order on a fresh prefix with `limiter`, returning what each `limit()` gave. */
export async function runTimeline(redis: unknown, limiter: Algorithm, rows: readonly TimelineRow[], config: Partial<RatelimitConfig> = {}): Promise<TimelineRow[]> {
  const clock = new FixedClock(T0);
  const ratelimit = new Ratelimit({ redis, limiter, prefix: uniquePrefix('timeline'), now: clock.now, ephemeralCache: false, ...config });
  const seen: TimelineRow[] = [];
  for (const row of rows) {
    clock.ms = T0 + row.at;
    const response: RatelimitResponse = await ratelimit.limit('id', row.rate === undefined ? undefined : { rate: row.rate });
    seen.push({ at: row.at, ...(row.rate === undefined ? {} : { rate: row.rate }), success: response.success, remaining: response.remaining, reset: response.reset });
  }
  return seen;
}
