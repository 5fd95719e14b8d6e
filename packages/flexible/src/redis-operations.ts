/**
 * Sends RateLimiterRedis's operations (see redis-scripts.ts) through
 * @ratekit/redis's `scriptBatcher`: one call each, or coalesced (the
 * operations asked in one iteration of the event loop go in one call, as
 * @ratekit/redis coalesces its decisions, scheduled by core's
 * `turnCoalescer`).
 *
 * Why coalescing never changes a result (the batcher's rule): each
 * operation runs the very code of {@link OPERATION_SCRIPT}, one after the
 * other in the order asked, inside one script that Redis runs without
 * interruption, so every operation reads what the operations before it
 * left, exactly as when each is sent alone on the same connection. An
 * operation that fails inside a batch (a key of another type) fails alone;
 * a call that fails (a closed connection) fails each of its operations. On a
 * cluster a batch holds the operations of one hash slot.
 */
import { scriptBatcher } from '@ratekit/redis';
import type { RedisTransport } from './redis-client.js';
import { OPERATION_SCRIPT } from './redis-scripts.js';

/** An operation of OPERATION_SCRIPT (redis-scripts.ts): `i` incr with TTL, `n` incr without, `s` set, `g` get, `d` delete. */
export type OperationCode = 'i' | 'n' | 's' | 'g' | 'd';

/** Sends operations; `flush` sends the waiting ones at once. */
export interface OperationSender {
  /** Runs `op` on `key` with `points` and `seconds` (strings, as the script reads them); resolves with the script's reply. */
  send(key: string, op: OperationCode, points: string, seconds: string): Promise<unknown>;
  /** Sends the operations waiting for their iteration's batch now. */
  flush(): void;
}

/** Coalescing, resolved (core's `resolveCoalescing`). */
export interface CoalescingSettings {
  readonly coalesce: boolean;
  readonly maxBatchSize: number;
  readonly batchesInFlight: number;
}

/** The sender for `transport`: one call per operation, or coalesced per `settings`. */
export function operationSender(transport: RedisTransport, settings: CoalescingSettings): OperationSender {
  const batcher = scriptBatcher(transport, [OPERATION_SCRIPT], settings);
  return {
    send: (key, op, points, seconds) => batcher.run(OPERATION_SCRIPT, [key], [op, points, seconds]),
    flush: () => batcher.flush(),
  };
}
