/** What redis-failover.test.ts and its driver processes (redis-failover.driver.ts) say to each other. */

export type ClientName = 'node-redis' | 'ioredis';
export type Topology =
  | { kind: 'single'; host: string; port: number }
  | { kind: 'cluster'; nodes: Array<{ host: string; port: number }> }
  | { kind: 'sentinel'; sentinels: Array<{ host: string; port: number }>; name: string };

export interface StartMessage {
  type: 'start';
  client: ClientName;
  topology: Topology;
  namespace: string;
  keys: string[];
  /** One fixed window of `limit` per `windowMs`, per key. */
  limit: number;
  windowMs: number;
  storeTimeoutMs: number;
  onStoreError: 'deny' | 'allow';
  /** Concurrent decision loops, each walking the keys from its own offset. */
  loops: number;
  /** Pause between a loop's decisions, in ms. */
  pauseMs: number;
}

/**
 * One decision: `[key index, started at (epoch ms), latency ms, origin, remaining, longest stall of this process while it ran (ms)]`.
 * Origin: {@link ADMITTED} or {@link REFUSED} by Redis, the policy's answer ({@link DENIED_BY_POLICY},
 * {@link ALLOWED_BY_POLICY}: the whole limit remaining, a fresh state), 0 anything else.
 */
export type Sample = [number, number, number, number, number, number];
export const ADMITTED = 1;
export const REFUSED = 2;
export const DENIED_BY_POLICY = 3;
export const ALLOWED_BY_POLICY = 4;
