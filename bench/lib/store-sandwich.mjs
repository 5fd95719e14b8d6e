// Sandwich rounds for several clients at once: each client has its own
// baseline (the trivial script on that client), and every variant slice sits
// between two slices of its own client's baseline:
//
//   round: [B₁ V B₁ V B₁ …] [B₂ V B₂ V B₂ …] [B₃ …]    clients and variants in a shuffled order
//
// Each client block starts with a fresh baseline slice, because the blocks of
// the other clients ran in between. The baselines of the clients within one
// round give a rough comparison of the clients themselves (seconds apart,
// not adjacent: read it with its [min–max]).

import { describe } from './sandwich.mjs';
import { shuffled, summary } from './stats.mjs';

/**
 * @param {object} input
 * @param {{ id: string, baseline: string, variants: string[] }[]} input.clients - contender ids per client
 * @param {number} input.rounds
 * @param {(id: string) => Promise<{ rate: number, cpuRate?: number }>} input.measure - one slice of a contender
 * @param {() => number} input.random
 * @param {(event: { round: number, id: string, slice: object }) => void} [input.onSlice]
 * @returns {Promise<{ contenders: Map<string, object> }>} per contender: the figures of `describe` (sandwich.mjs),
 *   `ratesByRound`, the mean rate of its slices in each round (for {@link crossRatio}), and `sliceRecords`, what `measure` returned
 */
export async function runClientSandwiches({ clients, rounds, measure, random, onSlice = () => {} }) {
  const entries = new Map();
  for (const client of clients) {
    for (const id of [client.baseline, ...client.variants]) entries.set(id, { slices: [], rates: [], ratios: [], cpuRates: [], cpuRatios: [], ratesByRound: [] });
  }
  const record = async (round, id) => {
    const slice = await measure(id);
    const entry = entries.get(id);
    entry.slices.push(slice);
    entry.rates.push(slice.rate);
    if (slice.cpuRate !== undefined) entry.cpuRates.push(slice.cpuRate);
    (entry.ratesByRound[round - 1] ??= []).push(slice.rate);
    onSlice({ round, id, slice });
    return slice;
  };
  for (let round = 1; round <= rounds; round++) {
    for (const client of shuffled(clients, random)) {
      let before = await record(round, client.baseline);
      for (const id of shuffled(client.variants, random)) {
        const slice = await record(round, id);
        const after = await record(round, client.baseline);
        const entry = entries.get(id);
        entry.ratios.push(slice.rate / ((before.rate + after.rate) / 2));
        if (slice.cpuRate !== undefined) entry.cpuRatios.push(slice.cpuRate / ((before.cpuRate + after.cpuRate) / 2));
        before = after;
      }
    }
  }
  const contenders = new Map();
  for (const client of clients) {
    for (const id of [client.baseline, ...client.variants]) {
      const entry = entries.get(id);
      contenders.set(id, { ...describe(entry, id === client.baseline), ratesByRound: entry.ratesByRound.map(mean), sliceRecords: entry.slices });
    }
  }
  return { contenders };
}

/**
 * Compares two contenders measured in the same rounds: per round, the mean
 * rate of `id` ÷ the mean rate of `reference`; the median [min–max] over rounds.
 */
export function crossRatio(contenders, id, reference) {
  const a = contenders.get(id)?.ratesByRound;
  const b = contenders.get(reference)?.ratesByRound;
  if (a === undefined || b === undefined) return undefined;
  const ratios = [];
  for (let r = 0; r < Math.min(a.length, b.length); r++) if (a[r] > 0 && b[r] > 0) ratios.push(a[r] / b[r]);
  return { ...summary(ratios), ratios };
}

function mean(values) {
  return values.reduce((sum, v) => sum + v, 0) / values.length;
}
