// Sandwich rounds: the method of bench/notes/method.md, shared by every part.
//
// Absolute rates on a shared 2-core box drift by tens of percent within
// seconds, so no figure is compared with one measured at another time. The
// baseline is measured before and after every variant:
//
//   B V₃ B V₁ B V₂ B | V₂ B V₃ B V₁ B | …      (variant order shuffled per round)
//
// and each variant slice is divided by the mean of the two baseline slices
// around it. A variant's ratio is the median of those per-round ratios, with
// their [min–max] as the honest error bar.

import { median, shuffled, spread, summary } from './stats.mjs';

/**
 * Runs `rounds` sandwich rounds.
 *
 * @param {object} input
 * @param {string} input.baseline - id of the reference contender
 * @param {string[]} input.variants - ids of the contenders compared to it
 * @param {number} input.rounds
 * @param {(id: string) => Promise<{ rate: number, cpuRate?: number }>} input.measure - runs one slice of a contender,
 *   returns its rate per wall-clock second, optionally its rate per second of its own CPU time (and anything else)
 * @param {() => number} input.random - for the shuffled order (see seededRandom)
 * @param {(event: { round: number, id: string, slice: object }) => void} [input.onSlice]
 * @returns {Promise<Map<string, { slices: object[], rates: number[], ratios: number[], cpuRates: number[], cpuRatios: number[] }>>}
 *   per contender: its slices in order, their rates, and (variants only) one ratio per round; the same per CPU second when measured
 */
export async function runSandwich({ baseline, variants, rounds, measure, random, onSlice = () => {} }) {
  const results = new Map([baseline, ...variants].map((id) => [id, { slices: [], rates: [], ratios: [], cpuRates: [], cpuRatios: [] }]));
  const record = (round, id, slice) => {
    const entry = results.get(id);
    entry.slices.push(slice);
    entry.rates.push(slice.rate);
    if (slice.cpuRate !== undefined) entry.cpuRates.push(slice.cpuRate);
    onSlice({ round, id, slice });
    return slice;
  };
  let before = record(0, baseline, await measure(baseline));
  for (let round = 1; round <= rounds; round++) {
    for (const id of shuffled(variants, random)) {
      const slice = record(round, id, await measure(id));
      const after = record(round, baseline, await measure(baseline));
      results.get(id).ratios.push(slice.rate / ((before.rate + after.rate) / 2));
      if (slice.cpuRate !== undefined) results.get(id).cpuRatios.push(slice.cpuRate / ((before.cpuRate + after.cpuRate) / 2));
      before = after;
    }
  }
  return results;
}

/**
 * The figures reported for one contender: rate = median over its slices,
 * spread = (max − min) / median of them, ratio = median over rounds [min–max]
 * (exactly 1 for the baseline itself). The same per CPU second when measured
 * (`cpuRate`, `cpuRatio`): a process that other processes kept off the CPU
 * during a slice loses wall-clock rate but not CPU-time rate.
 */
export function describe(entry, isBaseline) {
  const one = { median: 1, min: 1, max: 1 };
  const figures = {
    rate: median(entry.rates),
    spread: spread(entry.rates),
    slices: entry.rates.length,
    ratio: isBaseline ? one : summary(entry.ratios),
    ratios: isBaseline ? [] : entry.ratios,
  };
  if (entry.cpuRates.length === 0) return figures;
  return {
    ...figures,
    cpuRate: median(entry.cpuRates),
    cpuSpread: spread(entry.cpuRates),
    cpuRatio: isBaseline ? one : summary(entry.cpuRatios),
    cpuRatios: isBaseline ? [] : entry.cpuRatios,
  };
}
