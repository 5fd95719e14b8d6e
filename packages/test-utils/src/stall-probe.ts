import { performance } from 'node:perf_hooks';

/**
 * Measures how late this process's own timers fire. On a busy machine the
 * event loop can stall for longer than a store timeout, and a call caught in
 * such a stall waits for the process, not for the store: a latency bound
 * that holds on a quiet machine adds the longest stall seen while the call
 * ran ({@link longestStall}). Times are `performance.now()` readings.
 *
 * @example
 * ```ts
 * const stalls = new StallProbe();
 * const startedAt = performance.now();
 * await limiter.consume('k');
 * const waitedMs = performance.now() - startedAt - stalls.longestStall(startedAt, performance.now());
 * stalls.stop();
 * ```
 */
export class StallProbe {
  private readonly ticks: Array<{ at: number; lateMs: number }> = [];
  private expected: number;
  private readonly timer: ReturnType<typeof setInterval>;

  /** @param intervalMs - how often the probe's timer fires, in ms; a stall shorter than this may go unseen. */
  constructor(private readonly intervalMs = 10) {
    this.expected = performance.now() + intervalMs;
    this.timer = setInterval(() => {
      const now = performance.now();
      this.ticks.push({ at: now, lateMs: Math.max(0, now - this.expected) });
      this.expected = now + intervalMs;
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The longest stall the probe saw end between `from` and shortly (two intervals) after `to`, in ms. */
  longestStall(from: number, to: number): number {
    let longest = 0;
    for (let i = this.ticks.length - 1; i >= 0; i--) {
      const tick = this.ticks[i]!;
      if (tick.at < from) break;
      if (tick.at <= to + 2 * this.intervalMs && tick.lateMs > longest) longest = tick.lateMs;
    }
    return longest;
  }
}
