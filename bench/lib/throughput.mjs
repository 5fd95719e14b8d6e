// Sequential-call throughput in sandwich rounds, one child process per
// contender and key scenario. Shared by the parts that time synchronous or
// awaited calls (decisions, layers).

import { startChild } from './child.mjs';
import { describe, runSandwich } from './sandwich.mjs';

const WORKER = new URL('./slice-worker.mjs', import.meta.url).pathname;

/**
 * Runs one key scenario: starts a child per contender (each loads
 * `partModule` and calls its `prepare(id, { keys, maxKeys })`), warms them up
 * one at a time, then runs the sandwich rounds.
 *
 * @param {object} input
 * @param {string} input.partModule - absolute path of the module exporting `prepare`
 * @param {{ id: string }[]} input.contenders - the baseline among them
 * @param {string} input.baseline - the baseline's id
 * @param {{ id: string, title: string, keyCount: number }} input.scenario
 * @param {{ rounds: number, sliceMs: number, warmupMs: number, keys: number, cpuProfDir?: string }} input.options
 * @param {() => number} input.random
 * @param {(line: string) => void} input.log
 * @param {string} input.logPrefix
 * @param {(contender: { id: string }, execArgv: string[]) => { execArgv: string[], env?: object }} [input.launch] - how a contender's process starts (a twin on the --against ref: lib/against.mjs)
 * @returns {Promise<Record<string, object>>} per contender: rate, spread, ratio, ratios, sanity
 */
export async function runThroughputScenario({ partModule, contenders, baseline, scenario, options, random, log, logPrefix, launch = (_c, execArgv) => ({ execArgv }) }) {
  const children = new Map();
  try {
    for (const c of contenders) {
      const execArgv = options.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfDir}`, `--cpu-prof-name=${logPrefix}-${scenario.id}-${c.id}.cpuprofile`] : childFlags();
      children.set(c.id, startChild(WORKER, { args: [partModule], ...launch(c, execArgv), label: `${c.id} (${scenario.title})` }));
    }
    // Warm up one process at a time, so no warm-up competes for the cores.
    const sanity = new Map();
    for (const c of contenders) {
      const ready = await children.get(c.id).request({
        cmd: 'prepare',
        variant: c.id,
        keyCount: scenario.keyCount,
        maxKeys: options.keys,
        warmupMs: options.warmupMs,
      });
      sanity.set(c.id, ready.sanity);
    }
    let lastRound = 0;
    const raw = await runSandwich({
      baseline,
      variants: contenders.filter((c) => c.id !== baseline).map((c) => c.id),
      rounds: options.rounds,
      random,
      measure: (id) => children.get(id).request({ cmd: 'slice', ms: options.sliceMs }),
      onSlice: ({ round }) => {
        if (round !== lastRound) log(`${logPrefix}, ${scenario.title}: round ${(lastRound = round)}/${options.rounds}`);
      },
    });
    const out = {};
    for (const c of contenders) {
      const finished = await children.get(c.id).request({ cmd: 'finish' });
      const problems = [...new Set([sanity.get(c.id), finished.sanity].filter((s) => s !== 'ok'))];
      out[c.id] = { ...describe(raw.get(c.id), c.id === baseline), sanity: problems.length === 0 ? 'ok' : problems.join('; ') };
    }
    return out;
  } finally {
    await Promise.all([...children.values()].map((child) => child.close()));
  }
}

/** '100k' for 100_000. */
export function formatCount(n) {
  return n >= 1_000 && n % 1_000 === 0 ? `${n / 1_000}k` : String(n);
}

/**
 * Node/V8 flags for every contender's process, from BENCH_CHILD_FLAGS (space-separated), for
 * experiments such as a larger inlining budget (bench/README.md, "Quick runs and flags").
 */
function childFlags() {
  const flags = process.env.BENCH_CHILD_FLAGS?.trim();
  return flags ? flags.split(/\s+/) : [];
}
