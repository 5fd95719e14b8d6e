import { RateKitOptionError } from '../errors.js';
import { assertInteger } from '../validate.js';

/**
 * The check phase: `setImmediate` (Node, Bun, Deno, and Cloudflare Workers with `nodejs_compat`);
 * where a runtime has none (Workers without `nodejs_compat`, Vercel's Edge runtime), the next
 * macrotask, `setTimeout(…, 0)`, which also runs after the I/O callbacks already due.
 */
const checkPhase: (callback: () => void) => unknown = typeof setImmediate === 'function' ? (callback) => setImmediate(callback) : (callback) => setTimeout(callback, 0);

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
 * - a group goes to `send` at once, without waiting for the check phase,
 *   when it holds its **share** of the decisions pending (half by default:
 *   two batches in flight, so the server runs one while this process builds
 *   the next; see {@link TurnCoalescerOptions.batchesInFlight}) and at least
 *   16 decisions, or `maxBatchSize`;
 * - **under load**, when decisions joined the previous iteration's first,
 *   the first decision waits with the others (`first` returns `false`): one
 *   batch per iteration, instead of a lone call and a batch. An iteration
 *   that asks one decision (sent alone at its check phase) opens again, and
 *   so does one after which nothing joined.
 *
 * A lone decision in an idle process is thus sent at once, and a busy
 * process sends a few calls per iteration (per group), never one call that
 * leaves the server idle while the process works and the process idle while
 * the server works: bench/notes/coalescing.md measures these rules. `send` gets at least one decision, and sends a lone
 * one as it likes; it should not throw (a throw rejects each decision of the
 * batch with it).
 *
 * @example
 * ```ts
 * const turns = turnCoalescer<Waiting>({ maxBatchSize: 64, send: (batch) => sendBatch(batch) });
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

/** What {@link turnCoalescer} is given. */
export interface TurnCoalescerOptions<T extends Pending> {
  /** The most decisions in one `send` (an integer ≥ 1; stores check their option). */
  readonly maxBatchSize: number;
  /**
   * Sends a batch of decisions of one group, in the order asked. Returns a
   * promise that settles when the batch's reply has been handled (so the
   * coalescer knows the decisions in flight), or nothing when the batch is
   * done once `send` returns.
   */
  readonly send: (batch: T[]) => PromiseLike<unknown> | void;
  /** The group of a decision (only decisions of one group go in one batch); default: one group. */
  readonly groupOf?: (item: T) => unknown;
  /** Called after the check phase's batches are sent (a store that tracks what it sent in one iteration forgets it). */
  readonly onTurnEnd?: () => void;
  /**
   * A batch goes as soon as it holds at least `minEarlyBatchSize` decisions
   * and `1 / batchesInFlight` of the decisions pending (queued, or sent in a
   * batch not yet settled), so that about `batchesInFlight` batches are in
   * flight at once and the server works on one while the process builds the
   * next. `0`: only `maxBatchSize` and the check phase send a batch (one
   * batch per iteration). Default {@link DEFAULT_BATCHES_IN_FLIGHT}.
   */
  readonly batchesInFlight?: number;
  /**
   * The fewest decisions a batch sent early (before the check phase, for
   * `batchesInFlight`) holds: a smaller one would cost a call (on both
   * sides) for little overlap, so the decisions of a lightly loaded process
   * still go as one batch per iteration. Default
   * {@link MIN_EARLY_BATCH_SIZE}.
   */
  readonly minEarlyBatchSize?: number;
}

/**
 * The default {@link TurnCoalescerOptions.minEarlyBatchSize}: a call costs
 * Redis about 2.5–3 µs beyond the work of its decisions
 * (bench/notes/coalescing.md), so an early batch of 16 adds at most about
 * 0.2 µs per decision for the overlap it buys.
 */
export const MIN_EARLY_BATCH_SIZE = 16;

/**
 * The default {@link TurnCoalescerOptions.batchesInFlight}, for a client that
 * writes each call to the server at once: two batches in flight, so that the
 * server decides one while this process builds the next (bench/notes/coalescing.md,
 * "Never slower").
 */
export const DEFAULT_BATCHES_IN_FLIGHT = 2;

/** The coalescing options of a remote store (@ratekit/redis, @ratekit/postgres), as its users give them. */
export interface CoalescingOptions {
  /** Whether decisions are coalesced (see {@link TurnCoalescer}). @default true */
  coalesce?: boolean;
  /** The most decisions in one coalesced call (an integer ≥ 2). @default 64 */
  maxBatchSize?: number;
  /**
   * How many coalesced calls the store aims to have in flight at once (an
   * integer ≥ 0): a batch is sent as soon as it holds at least 16 decisions
   * and `1 / batchesInFlight` of the decisions pending (waiting, or in a call
   * not yet answered), so the server decides one batch while this process
   * builds the next. `0`: a batch goes only at the check phase or at
   * `maxBatchSize` (one call per iteration).
   * @default {@link DEFAULT_BATCHES_IN_FLIGHT} (2), unless the store gives another
   */
  batchesInFlight?: number;
}

/**
 * Checks and completes a store's {@link CoalescingOptions}.
 * @throws {RateKitOptionError} `coalesce` not a boolean, `maxBatchSize` not an integer ≥ 2, `batchesInFlight` not an integer ≥ 0
 */
export function resolveCoalescing(options: CoalescingOptions, batchesInFlightDefault = DEFAULT_BATCHES_IN_FLIGHT): Required<CoalescingOptions> {
  const { coalesce = true, maxBatchSize = 64, batchesInFlight = batchesInFlightDefault } = options;
  if (typeof coalesce !== 'boolean') throw new RateKitOptionError('coalesce', 'a boolean', coalesce);
  assertInteger('maxBatchSize', maxBatchSize, 2);
  assertInteger('batchesInFlight', batchesInFlight, 0);
  return { coalesce, maxBatchSize, batchesInFlight };
}

/**
 * Creates a {@link TurnCoalescer}.
 *
 * @example
 * ```ts
 * const turns = turnCoalescer<Waiting>({ maxBatchSize: 64, send: (batch) => sendBatch(batch) });
 * ```
 */
export function turnCoalescer<T extends Pending>(options: TurnCoalescerOptions<T>): TurnCoalescer<T> {
  const { maxBatchSize, send, groupOf, onTurnEnd } = options;
  const share = options.batchesInFlight ?? DEFAULT_BATCHES_IN_FLIGHT;
  let scheduled = false;
  // Decisions queued, or in a batch whose `send` has not settled: the concurrency the batches share.
  let pending = 0;
  const minEarly = Math.max(2, options.minEarlyBatchSize ?? MIN_EARLY_BATCH_SIZE);
  const full = (length: number) => length >= maxBatchSize || (length >= minEarly && length * share >= pending);
  // Whether the next iteration's first decision goes at once; how many joined this iteration's batches.
  let open = true;
  let joined = 0;
  // Without groups, one array; with groups, one per group, in the order they appeared.
  let single: T[] = [];
  const groups = new Map<unknown, T[]>();

  const sendSafely = (batch: T[]) => {
    const settle = () => {
      pending -= batch.length;
    };
    try {
      const sending = send(batch);
      if (sending === undefined) settle();
      else sending.then(settle, settle);
    } catch (error) {
      settle();
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
      checkPhase(endOfTurn);
      return open;
    },
    add(item) {
      joined++;
      pending++;
      if (groupOf === undefined) {
        single.push(item);
        if (full(single.length)) {
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
        if (full(batch.length)) {
          groups.delete(group);
          sendSafely(batch);
        }
      }
    },
    flush,
  };
}
