/**
 * The sync message: one batch of a node's usage deltas since its previous
 * message, published on the channel every sync interval.
 *
 * On the wire it is JSON (keys are user-controlled strings; JSON escapes
 * every one of them, NUL and lone surrogates included):
 *
 * ```json
 * {"v":1,"n":"<node id>","s":42,"d":[["<namespace>","<key>","<limit id>",[<start>,<expires>,<delta>, …]], …]}
 * ```
 *
 * - `v`: the format version; a node ignores (and reports) versions it does not know.
 * - `n`: the sender's node id, so a node skips its own messages.
 * - `s`: the sender's message sequence number, 1, 2, 3, …; a gap tells a
 *   receiver that it missed messages (Redis pub/sub delivers at most once).
 * - `d`: one row per (namespace, key, limit id), then flat triples per window:
 *   the window's start (Unix epoch ms), the instant it stops mattering
 *   (Unix epoch ms), and the delta in cost units (negative for refunds and resets).
 *
 * @module
 */

/** The format version this package writes and reads. */
export const FORMAT_VERSION = 1;

/** The deltas of one limit under one key. */
export interface SyncEntry {
  readonly namespace: string;
  readonly key: string;
  readonly limitId: string;
  /** Flat `startMs, expiresAtMs, delta` triples, one per window. */
  readonly windows: readonly number[];
}

/** One message of one node. */
export interface SyncMessage {
  readonly node: string;
  readonly seq: number;
  readonly entries: readonly SyncEntry[];
}

/** Encodes a message for the channel. */
export function encodeMessage(message: SyncMessage): string {
  const rows = message.entries.map((e) => [e.namespace, e.key, e.limitId, e.windows]);
  return JSON.stringify({ v: FORMAT_VERSION, n: message.node, s: message.seq, d: rows });
}

/**
 * Decodes and validates a message from the channel.
 *
 * @throws {Error} naming what is wrong when the text is not a well-formed
 *   message of {@link FORMAT_VERSION}; nothing of a malformed message is applied.
 */
export function decodeMessage(text: string): SyncMessage {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`not JSON: ${preview(text)}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(`not an object: ${preview(text)}`);
  const { v, n, s, d } = parsed as Record<string, unknown>;
  if (v !== FORMAT_VERSION) throw new Error(`unknown format version ${JSON.stringify(v)} (this node reads ${FORMAT_VERSION})`);
  if (typeof n !== 'string' || n === '') throw new Error('no node id (`n`)');
  if (typeof s !== 'number' || !Number.isSafeInteger(s) || s < 1) throw new Error(`bad sequence number (\`s\`): ${JSON.stringify(s)}`);
  if (!Array.isArray(d)) throw new Error('no delta rows (`d`)');
  const entries: SyncEntry[] = [];
  for (let r = 0; r < d.length; r++) {
    const row: unknown = d[r];
    if (!Array.isArray(row) || row.length !== 4) throw new Error(`row ${r} is not [namespace, key, limit id, windows]`);
    const [namespace, key, limitId, windows] = row as unknown[];
    if (typeof namespace !== 'string' || typeof key !== 'string' || typeof limitId !== 'string') {
      throw new Error(`row ${r}: namespace, key and limit id must be strings`);
    }
    if (!Array.isArray(windows) || windows.length === 0 || windows.length % 3 !== 0) {
      throw new Error(`row ${r}: windows must be non-empty (start, expires, delta) triples`);
    }
    for (const value of windows) if (typeof value !== 'number' || !Number.isFinite(value)) throw new Error(`row ${r}: windows must hold finite numbers`);
    entries.push({ namespace, key, limitId, windows: windows as number[] });
  }
  return { node: n, seq: s, entries };
}

function preview(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}
