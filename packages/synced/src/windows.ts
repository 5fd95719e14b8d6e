/**
 * The counters of one limit under one key: a few epoch-aligned windows, each
 * with the usage every node reported for it and this node's share that has
 * not been published yet.
 *
 * Counts are sums of deltas (positive for admissions, negative for refunds
 * and resets). Addition commutes, so nodes that have applied the same deltas
 * hold the same raw counts whatever order the deltas arrived in; the raw
 * count can dip below 0 for a moment (a peer's refund overtaking the
 * admission it gives back), so readers clamp it with {@link WindowCounters.used}.
 *
 * Not thread-safe and not pure: the methods mutate the counters in place.
 * A key holds 1–3 windows per limit, so a flat array scanned linearly beats a map.
 */
export class WindowCounters {
  /**
   * Stride-4 cells: window start (Unix epoch ms), expiry (Unix epoch ms, the
   * instant after which no algorithm reads the window), raw count, and this
   * node's unpublished delta.
   */
  private readonly cells: number[] = [];

  /** How many windows are held. */
  get size(): number {
    return this.cells.length / STRIDE;
  }

  /** True when some window has an unpublished delta. */
  get hasPending(): boolean {
    for (let i = 3; i < this.cells.length; i += STRIDE) if (this.cells[i] !== 0) return true;
    return false;
  }

  /** The raw count of the window starting at `startMs` (0 when none is held). May be negative. */
  raw(startMs: number): number {
    const i = this.find(startMs);
    return i < 0 ? 0 : this.cells[i + 2]!;
  }

  /** The usage of the window starting at `startMs` as limiting sees it: the raw count, never below 0. */
  used(startMs: number): number {
    const raw = this.raw(startMs);
    return raw > 0 ? raw : 0;
  }

  /**
   * Adds `delta` to the window starting at `startMs`, creating it when
   * needed. `own` deltas are also added to the unpublished delta, for the
   * next sync; peers' deltas are not. The window's expiry is raised to
   * `expiresAtMs` if that is later.
   */
  add(startMs: number, expiresAtMs: number, delta: number, own: boolean): void {
    let i = this.find(startMs);
    if (i < 0) {
      i = this.cells.length;
      this.cells.push(startMs, expiresAtMs, 0, 0);
    } else if (expiresAtMs > this.cells[i + 1]!) this.cells[i + 1] = expiresAtMs;
    this.cells[i + 2]! += delta;
    if (own) this.cells[i + 3]! += delta;
  }

  /**
   * Adds `delta` to the unpublished delta only: for deltas taken by
   * {@link takePending} whose publication failed. The count already holds them.
   */
  restorePending(startMs: number, expiresAtMs: number, delta: number): void {
    let i = this.find(startMs);
    if (i < 0) {
      // The window was pruned meanwhile; keep the delta so peers still get it.
      i = this.cells.length;
      this.cells.push(startMs, expiresAtMs, 0, 0);
    }
    this.cells[i + 3]! += delta;
  }

  /**
   * Moves every unpublished delta of a window still live at `nowMs` into
   * `into` as `start, expiry, delta` triples, and zeroes them all (the deltas
   * of expired windows are dropped: no peer would read them). Returns how
   * many triples were appended.
   */
  takePending(nowMs: number, into: number[]): number {
    let taken = 0;
    for (let i = 0; i < this.cells.length; i += STRIDE) {
      const delta = this.cells[i + 3]!;
      if (delta === 0) continue;
      this.cells[i + 3] = 0;
      if (this.cells[i + 1]! <= nowMs) continue;
      into.push(this.cells[i]!, this.cells[i + 1]!, delta);
      taken++;
    }
    return taken;
  }

  /**
   * Drops the windows that expired at or before `nowMs`, with their
   * unpublished deltas (peers drop expired windows too). Returns how many
   * windows remain.
   */
  prune(nowMs: number): number {
    let kept = 0;
    for (let i = 0; i < this.cells.length; i += STRIDE) {
      if (this.cells[i + 1]! <= nowMs) continue;
      if (kept !== i) for (let k = 0; k < STRIDE; k++) this.cells[kept + k] = this.cells[i + k]!;
      kept += STRIDE;
    }
    this.cells.length = kept;
    return kept / STRIDE;
  }

  /** Every window held, as `[startMs, expiresAtMs, raw, pending]` tuples, oldest first; for tests and inspection. */
  snapshot(): Array<[startMs: number, expiresAtMs: number, raw: number, pending: number]> {
    const out: Array<[number, number, number, number]> = [];
    for (let i = 0; i < this.cells.length; i += STRIDE) out.push([this.cells[i]!, this.cells[i + 1]!, this.cells[i + 2]!, this.cells[i + 3]!]);
    return out.sort((a, b) => a[0] - b[0]);
  }

  private find(startMs: number): number {
    for (let i = 0; i < this.cells.length; i += STRIDE) if (this.cells[i] === startMs) return i;
    return -1;
  }
}

const STRIDE = 4;
