/** A decision waiting for its batch: what a {@link TurnCoalescer} holds. */
export interface Pending {
  /** Fails the decision (its batch could not be sent). */
  readonly reject: (error: unknown) => void;
}

/**
 * The batching of a remote store's decisions by iteration of the event loop
 * (`coalesce` of @ratekit/redis and @ratekit/postgres):
 *
 * - the first decision of an iteration goes **at once**, alone:
 *   {@link TurnCoalescer.first} returns `true` and the store sends it itself,
 *   so a decision alone waits for nothing (no timer, no tick, no
 *   `setImmediate`);
 * - the decisions asked after it wait ({@link TurnCoalescer.add}) until the
 *   `setImmediate` that `first` scheduled: the check phase of the same
 *   iteration, after the poll phase has run every I/O callback that was
 *   ready (each HTTP request's socket read is one). Then each group's
 *   decisions (one group per hash slot on a Redis Cluster, per policy on
 *   PostgreSQL) go to `send` in the order they were asked;
 * - a group that reaches `maxBatchSize` goes to `send` at once, without
 *   waiting for the check phase;
 * - **under load**, when decisions joined the previous iteration's first,
 *   the first decision waits with the others (`first` returns `false`): one
 *   batch per iteration, instead of a lone call and a batch. An iteration
 *   that asks one decision (sent alone at its check phase) opens again, and
 *   so does one after which nothing joined.
 *
 * A lone decision in an idle process is thus sent at once, and a busy
 * process sends one call per iteration (per group): bench/notes/coalescing.md
 * measures both rules. `send` gets at least one decision, and sends a lone
 * one as it likes; it should not throw (a throw rejects each decision of the
 * batch with it).
 *
 * @example
 * ```ts
 * const turns = turnCoalescer<Waiting>(64, (batch) => sendBatch(batch));
 * function evaluate(request) {
 *   if (turns.first()) return sendOne(request);
 *   return new Promise((resolve, reject) => turns.add({ request, resolve, reject }));
 * }
 * ```
 */
export interface TurnCoalescer<T extends Pending> {
  /**
   * Schedules the iteration's batch if it is not yet. `true`: this is the
   * iteration's first decision and the coalescer is open (not under load):
   * the caller sends it at once, alone. `false`: the caller {@link add}s it.
   */
  first(): boolean;
  /** Queues a decision (when {@link first} returned `false`). */
  add(item: T): void;
  /** Sends every queued decision now (a store's `dispose`): none is left waiting for the check phase. */
  flush(): void;
}

/**
 * Creates a {@link TurnCoalescer}.
 *
 * @param maxBatchSize - the most decisions in one `send` (an integer ≥ 1; stores check their option).
 * @param send - sends a batch of decisions of one group, in the order asked.
 * @param groupOf - the group of a decision (only decisions of one group go in one batch); default: one group.
 * @param onTurnEnd - called after the check phase's batches are sent (a store that tracks what it sent in one iteration forgets it).
 */
export function turnCoalescer<T extends Pending>(maxBatchSize: number, send: (batch: T[]) => void, groupOf?: (item: T) => unknown, onTurnEnd?: () => void): TurnCoalescer<T> {
  let scheduled = false;
  // Whether the next iteration's first decision goes at once; how many joined this iteration's batches.
  let open = true;
  let joined = 0;
  // Without groups, one array; with groups, one per group, in the order they appeared.
  let single: T[] = [];
  const groups = new Map<unknown, T[]>();

  const sendSafely = (batch: T[]) => {
    try {
      send(batch);
    } catch (error) {
      for (const item of batch) item.reject(error);
    }
  };
  const flush = () => {
    if (single.length > 0) {
      const batch = single;
      single = [];
      sendSafely(batch);
    }
    if (groups.size > 0) {
      const all = [...groups.values()];
      groups.clear();
      for (const batch of all) sendSafely(batch);
    }
  };
  const endOfTurn = () => {
    scheduled = false;
    const waited = joined;
    joined = 0;
    flush();
    // Under load (decisions joined the first), the next iteration's first waits with the others:
    // one call per iteration. An iteration with a lone decision opens again.
    open = open ? waited === 0 : waited <= 1;
    onTurnEnd?.();
  };

  return {
    first() {
      if (scheduled) return false;
      scheduled = true;
      setImmediate(endOfTurn);
      return open;
    },
    add(item) {
      joined++;
      if (groupOf === undefined) {
        single.push(item);
        if (single.length >= maxBatchSize) {
          const batch = single;
          single = [];
          sendSafely(batch);
        }
        return;
      }
      const group = groupOf(item);
      const batch = groups.get(group);
      if (batch === undefined) {
        if (maxBatchSize <= 1) sendSafely([item]);
        else groups.set(group, [item]);
      } else {
        batch.push(item);
        if (batch.length >= maxBatchSize) {
          groups.delete(group);
          sendSafely(batch);
        }
      }
    },
    flush,
  };
}
