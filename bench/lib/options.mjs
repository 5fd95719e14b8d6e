// Command-line and environment options of `node bench/run.mjs`.
//
// Every count can be set by a flag or an environment variable (flags win), so
// a quick run is `pnpm bench --quick` or `BENCH_ROUNDS=3 pnpm bench`.

import { parseArgs } from 'node:util';

/** The parts `--only` can select, by short name: the URL of each one's file under bench/. */
export const PARTS = {
  decisions: new URL('../memory-decisions.mjs', import.meta.url).href,
  bytes: new URL('../memory-bytes.mjs', import.meta.url).href,
  layers: new URL('../decision-layers.mjs', import.meta.url).href,
  store: new URL('../store.mjs', import.meta.url).href, // Redis: starts its own redis-server unless REDIS_URL is set
  http: new URL('../http.mjs', import.meta.url).href, // on request: about 6 min (see bench/README.md)
  flood: new URL('../flood.mjs', import.meta.url).href, // on request: one key flooded through each framework on Redis, about 2½ min (bench/notes/attack-and-fleet.md)
  fleet: new URL('../fleet.mjs', import.meta.url).href, // on request: 4 app processes (node:cluster) on one Redis, about 3 min (bench/notes/attack-and-fleet.md)
  flexible: new URL('../flexible.mjs', import.meta.url).href, // on request: @ratekit/flexible against rate-limiter-flexible, the rows of decisions, bytes, store and http (Express) with only those two (issue 32)
  upstash: new URL('../upstash.mjs', import.meta.url).href, // on request: @ratekit/upstash against @upstash/ratelimit on one local REST endpoint, and over TCP (issue 39)
  size: new URL('../install-size.mjs', import.meta.url).href, // install footprint against the incumbents, from npm pack; needs the npm registry for the incumbents (bench/notes/install-size.md)
};

/** What runs without `--only`. `layers` is a diagnostic, run on request. `size` times nothing, and takes seconds. */
const DEFAULT_PARTS = ['decisions', 'bytes', 'store', 'size'];

/** Aliases accepted by `--only`: the file stems. */
const PART_ALIASES = { 'memory-decisions': 'decisions', 'memory-bytes': 'bytes', 'decision-layers': 'layers', 'install-size': 'size' };

/** Full-run defaults: the peer benchmark's method (bench/notes/method.md §1 and §3). */
const FULL = { rounds: 10, sliceMs: 250, warmupMs: 1_000, keys: 100_000, memoryKeys: 1_000_000 };
/** `--quick`: the same shape, small enough for a smoke run (under a minute). */
const QUICK = { rounds: 3, sliceMs: 100, warmupMs: 300, keys: 100_000, memoryKeys: 200_000 };

const NUMERIC = [
  ['rounds', 'BENCH_ROUNDS', 1],
  ['slice-ms', 'BENCH_SLICE_MS', 10],
  ['warmup-ms', 'BENCH_WARMUP_MS', 0],
  ['keys', 'BENCH_KEYS', 2],
  ['memory-keys', 'BENCH_MEMORY_KEYS', 10_000],
];

export const USAGE = `Usage: node bench/run.mjs [options]   (pnpm bench [options])

  --json                 print one JSON document on stdout (progress goes to stderr)
  --quick                small counts for a smoke run (env BENCH_QUICK=1)
  --only=<part>[,<part>] run some parts: ${Object.keys(PARTS).join(', ')} (or their file stems);
                         default ${DEFAULT_PARTS.join(', ')} (layers: where a decision's time goes, on request)
                         flood: one key far over its limit through express, fastify and koa on Redis: Redis
                           commands per refusal period and server CPU per refusal (env BENCH_FLOOD_MS, default
                           10000 per limiter and framework, quick 1500; BENCH_FLOOD_ROUNDS 5; BENCH_FLOOD_WARMUP_MS 2000;
                           BENCH_FLOOD_CONNECTIONS 50, the requests in flight)
                         flexible: @ratekit/flexible against rate-limiter-flexible with only the import changed:
                           the rows of decisions, bytes, store (node-redis, ioredis) and http (Express), one table
                         upstash: @upstash/ratelimit and @ratekit/upstash on one local Upstash REST endpoint, and ours
                           over TCP: HTTP requests, Redis commands and Redis CPU per decision, decisions/s
                           with 50 in flight, per algorithm (about 2 min; --quick: 15 s)
                         size: install footprint (packed, unpacked, files, dependencies) of each ratekit package set
                           and its incumbent, from npm pack; the incumbents need the npm registry (skipped without it)
                         fleet: 4 app processes (node:cluster) on one Redis, 10k client keys: p50/p99 latency added
                           over the bare cluster and Redis CPU per request, against the peers (env BENCH_FLEET_ROUNDS,
                           default 3; BENCH_FLEET_SLICE_MS 4000; BENCH_FLEET_WARMUP_MS 2000; BENCH_FLEET_WORKERS 4;
                           BENCH_FLEET_KEYS 10000, quick 2000)
  --variants=<id>[,<id>] run some variants of each part (baselines always run); flood and fleet: a framework
                         (koa), a row (rlflex-redis, incumbent-redis: flood's on-request row) or koa/<row>;
                         size: a set (express, koa, fastify, nestjs, redis)
  --rounds=<n>           sandwich rounds (env BENCH_ROUNDS; default ${FULL.rounds}, quick ${QUICK.rounds})
  --slice-ms=<ms>        length of one measured slice (env BENCH_SLICE_MS; default ${FULL.sliceMs})
  --warmup-ms=<ms>       warm-up per process after every key was touched (env BENCH_WARMUP_MS; default ${FULL.warmupMs})
  --keys=<n>             keys of the "many keys" throughput scenario (env BENCH_KEYS; default ${FULL.keys})
  --memory-keys=<n>      distinct keys for bytes per key (env BENCH_MEMORY_KEYS; default ${FULL.memoryKeys})
  --seed=<n>             seed of the shuffled variant order (default: random, reported)
  --cpu-prof=<dir>       write a V8 CPU profile of every throughput child process into <dir>
  --against=<git ref>    also run that commit's build, in a worktree of its own (bench/.against/<sha>, built once),
                         as a twin of each of our rows in the same run: every table then shows "this ÷ that ref"
                         (decisions, http, store, flood, fleet, upstash; lib/against.mjs)
  --from=<file.json>     measure nothing: print the tables of a document saved from --json
  --help                 this text
`;

/**
 * Parses argv and the environment into the bench options.
 * @throws {Error} on an unknown flag or a bad number, naming it.
 */
export function parseOptions(argv = process.argv.slice(2), env = process.env) {
  const numeric = Object.fromEntries(NUMERIC.map(([flag]) => [flag, { type: 'string' }]));
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      json: { type: 'boolean', default: false },
      quick: { type: 'boolean', default: env.BENCH_QUICK === '1' },
      only: { type: 'string' },
      variants: { type: 'string' },
      seed: { type: 'string' },
      'cpu-prof': { type: 'string' },
      against: { type: 'string' },
      from: { type: 'string' },
      help: { type: 'boolean', default: false },
      ...numeric,
    },
  });
  const defaults = values.quick ? QUICK : FULL;
  const options = {
    json: values.json,
    quick: values.quick,
    help: values.help,
    parts: parseParts(values.only),
    variants:
      values.variants === undefined
        ? undefined
        : values.variants
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean),
    seed: values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : toInteger('--seed', values.seed, 0),
    cpuProfDir: values['cpu-prof'],
    against: values.against,
    from: values.from,
  };
  for (const [flag, envName, min] of NUMERIC) {
    const name = flag.replace(/-(\w)/g, (_, c) => c.toUpperCase());
    const given = values[flag] ?? env[envName];
    options[name] = given === undefined || given === '' ? defaults[name] : toInteger(values[flag] === undefined ? envName : `--${flag}`, given, min);
  }
  return options;
}

function parseParts(only) {
  if (only === undefined) return DEFAULT_PARTS;
  const parts = only
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((p) => PART_ALIASES[p] ?? p);
  for (const part of parts) {
    if (!(part in PARTS)) throw new Error(`Expected --only to name parts among ${Object.keys(PARTS).join(', ')}, got ${JSON.stringify(part)}`);
  }
  if (parts.length === 0) throw new Error('Expected --only to name at least one part, got an empty list');
  return parts;
}

function toInteger(name, text, min) {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min) throw new Error(`Expected ${name} to be an integer >= ${min}, got ${JSON.stringify(text)}`);
  return n;
}

/**
 * A part's own schedule, for parts whose counts are not the decision parts' (seconds of HTTP
 * load): each field from its environment variable in `names` (`{ field: 'BENCH_…' }`), or from
 * `defaults`. @throws {Error} naming the variable, when it is not an integer ≥ `min[field]` (default 0)
 */
export function scheduleFromEnv(defaults, names, { min = {}, env = process.env } = {}) {
  const out = {};
  for (const [field, name] of Object.entries(names)) {
    const text = env[name];
    out[field] = text === undefined || text === '' ? defaults[field] : toInteger(name, text, min[field] ?? 0);
  }
  return out;
}
