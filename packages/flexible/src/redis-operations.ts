/**
 * Sends RateLimiterRedis's operations (see redis-scripts.ts), one script call
 * each, or coalesced: the operations asked in one iteration of the event loop
 * go in one call of the batch script, as @ratekit/redis coalesces its
 * decisions, scheduled by core's `turnCoalescer`.
 *
 * Why coalescing never changes a result: the batch script runs its
 * operations one after the other, in the order they were asked, each with the
 * very code of the single-operation script, and Redis runs a script without
 * interruption. So every operation reads what the operations before it left,
 * exactly as when each is sent alone on the same connection (which also keeps
 * them in order). The first operation of an iteration is sent alone at once,
 * ahead of the batch on the same connection, so it too keeps its place. An
 * operation that fails inside a batch (a key of another type) fails alone,
 * as it would alone; a call that fails (a closed connection) fails each of
 * its operations.
 *
 * On a cluster, a batch holds the operations of one hash slot (the client
 * routes it by its first key); other slots go in other batches.
 */
import { type TurnCoalescer, turnCoalescer } from '@ratekit/core';
import type { RedisTransport } from './redis-client.js';
import { BATCH_SCRIPT, BATCH_SCRIPT_SHA } from './redis-scripts.js';

/** An operation of BATCH_SCRIPT (redis-scripts.ts): `i` incr with TTL, `n` incr without, `s` set, `g` get, `d` delete. */
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

interface Waiting {
  readonly key: string;
  readonly args: [OperationCode, string, string];
  readonly resolve: (reply: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** The sender for `transport`: one call per operation, or coalesced per `settings`. */
export function operationSender(transport: RedisTransport, settings: CoalescingSettings): OperationSender {
  // A lone operation is sent as a batch of one: one script for every call, so a node that lacks it
  // (NOSCRIPT) lacks it for every call sent to it in a row, and a lone call and the batch after it,
  // both answered NOSCRIPT, run again with EVAL in the order they were sent.
  const single = (key: string, op: OperationCode, points: string, seconds: string) =>
    attempt(() => transport.run(BATCH_SCRIPT, BATCH_SCRIPT_SHA, [key], [op, points, seconds])).then((replies) => {
      if (!Array.isArray(replies) || replies.length !== 1) throw new Error(`RateLimiterRedis: unexpected reply from the batch script: ${String(replies).slice(0, 200)}`);
      return unwrap(replies[0]);
    });
  if (!settings.coalesce) return { send: single, flush: () => {} };

  const sendBatch = (batch: Waiting[]): Promise<unknown> => {
    if (batch.length === 1) {
      const w = batch[0]!;
      const reply = single(w.key, ...w.args);
      reply.then(w.resolve, w.reject);
      return reply;
    }
    const keys: string[] = [];
    const args: string[] = [];
    for (const w of batch) {
      keys.push(w.key);
      args.push(...w.args);
    }
    const call = attempt(() => transport.run(BATCH_SCRIPT, BATCH_SCRIPT_SHA, keys, args));
    call.then(
      (replies) => {
        if (!Array.isArray(replies) || replies.length !== batch.length) {
          const error = new Error(`RateLimiterRedis: unexpected reply from the batch script: ${String(replies).slice(0, 200)}`);
          for (const w of batch) w.reject(error);
          return;
        }
        batch.forEach((w, i) => settleOne(w, replies[i]));
      },
      (error: unknown) => {
        for (const w of batch) w.reject(error);
      },
    );
    return call;
  };
  const slotOf = transport.slotOf;
  const turns: TurnCoalescer<Waiting> = turnCoalescer<Waiting>({
    maxBatchSize: settings.maxBatchSize,
    batchesInFlight: settings.batchesInFlight,
    send: sendBatch,
    groupOf: slotOf === undefined ? undefined : (w) => slotOf(w.key),
  });
  return {
    send: (key, op, points, seconds) => {
      if (turns.first()) return single(key, op, points, seconds);
      return new Promise((resolve, reject) => turns.add({ key, args: [op, points, seconds], resolve, reject }));
    },
    flush: () => turns.flush(),
  };
}

/** One entry of the batch script's reply, `{1, reply}` or `{0, message}`: the reply, or the operation's error thrown. */
function unwrap(entry: unknown): unknown {
  if (Array.isArray(entry) && entry[0] === 1) return entry.length > 1 ? entry[1] : null;
  if (Array.isArray(entry) && entry[0] === 0) throw new Error(String(entry[1]));
  throw new Error(`RateLimiterRedis: unexpected entry in the batch script's reply: ${String(entry).slice(0, 200)}`);
}

function settleOne(w: Waiting, entry: unknown): void {
  let reply: unknown;
  try {
    reply = unwrap(entry);
  } catch (error) {
    w.reject(error);
    return;
  }
  w.resolve(reply);
}

/** `send()`, a throw turned into a rejection. */
function attempt(send: () => Promise<unknown>): Promise<unknown> {
  try {
    return send();
  } catch (error) {
    return Promise.reject(error);
  }
}
