/**
 * Coalescing for RateLimiterPostgres: the adds (consume, penalty, reward) of
 * one iteration of the event loop, asked after its first, go to PostgreSQL as
 * one statement (core's turnCoalescer decides when, as in @ratekit/postgres).
 *
 * A statement cannot update one row twice, so the batch is folded per key
 * first ({@link foldBatch}): each key once, with the sum of its points and
 * the first add's duration, and each add's answer is recovered from the row
 * the statement returns ({@link unfoldPoints}): the k-th add of a key saw the
 * row's final count less the points of the adds after it.
 *
 * Why that is exact: the statement reads the clock once, so the adds of a
 * key happen at one instant, in the order asked. Only the first can find the
 * window ended (and restart it with its own duration, or insert the row);
 * after it the window is live (its end is in the future, or never), so every
 * later add only adds. That is what the same adds give one statement each,
 * sent back to back at that instant. (Sent one by one, a window that ends
 * between two of them restarts in between; coalesced, both fall before the
 * end. Either is a serial order of the same concurrent calls.)
 *
 * Rows are locked in the order of the keys, sorted, so two batches on a pool
 * cannot deadlock each other; rlf processes lock one row per statement.
 *
 * @module
 */

/** One add waiting for its batch. */
export interface PendingAdd {
  readonly key: string;
  readonly points: number;
  readonly msDuration: number;
}

/** A batch folded per key: the statement's parameters, and where each add's answer comes from. */
export interface FoldedBatch {
  /** Distinct keys, sorted (the lock order). */
  readonly keys: string[];
  /** Per key, the sum of its adds' points. */
  readonly points: number[];
  /** Per key, its first add's duration in ms. */
  readonly msDurations: number[];
  /** Per add (in the order given): the index of its key in `keys`, and the points of the same key's adds after it. */
  readonly answers: Array<{ readonly row: number; readonly after: number }>;
}

/** Folds a batch per key (see the module's rule). Does not mutate. */
export function foldBatch(batch: readonly PendingAdd[]): FoldedBatch {
  const keys = [...new Set(batch.map((add) => add.key))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const index = new Map(keys.map((key, i) => [key, i]));
  const points = keys.map(() => 0);
  const msDurations: number[] = keys.map(() => 0);
  const seen = keys.map(() => false);
  for (const add of batch) {
    const i = index.get(add.key)!;
    if (!seen[i]) {
      seen[i] = true;
      msDurations[i] = add.msDuration;
    }
    points[i]! += add.points;
  }
  // Walking backwards, the points each add has after it on its key.
  const later = keys.map(() => 0);
  const answers = new Array<{ row: number; after: number }>(batch.length);
  for (let j = batch.length - 1; j >= 0; j--) {
    const add = batch[j]!;
    const row = index.get(add.key)!;
    answers[j] = { row, after: later[row]! };
    later[row]! += add.points;
  }
  return { keys, points, msDurations, answers };
}

/** The count an add saw: the row's final count less the points of the same key's adds after it. */
export function unfoldPoints(rowPoints: number, after: number): number {
  return rowPoints - after;
}
