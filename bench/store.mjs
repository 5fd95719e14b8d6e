// Part "store": Redis-backed decisions, bench/notes/method.md §4.
//
// One client connection per contender process, 50 decisions in flight,
// sandwich rounds against the trivial EVALSHA on the same client library.
// Round trips are counted by command: INFO commandstats deltas around every
// slice, and a MONITOR capture that tells the client's commands (round
// trips) from the ones the scripts run. See bench/notes/redis-store.md.

import { accessSync, constants } from 'node:fs';
import os from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isTwin, twinOf, twinProcess, untwinned } from './lib/against.mjs';
import { startChild } from './lib/child.mjs';
import { formatPercent, formatRate, formatRatio, renderTable } from './lib/format.mjs';
import { median, seededRandom } from './lib/stats.mjs';
import { CLIENTS, LIMIT, VARIANTS } from './lib/store-contenders.mjs';
import { adminClient, addDelta, counterDelta, deleteKeys, inspectKeys, monitorWhile, openRedis, readCounters, storeVersions } from './lib/store-redis.mjs';
import { crossRatio, runClientSandwiches } from './lib/store-sandwich.mjs';
import { formatCount } from './lib/throughput.mjs';

const WORKER = fileURLToPath(new URL('./lib/store-worker.mjs', import.meta.url));

/** The issue's targets: ratio to the trivial script on the same client; above every peer; one round trip. */
export const TARGET = {
  min: 0.9,
  /** For reference only: the best peer in bench/notes/method.md §4 (rate-limiter-flexible, ioredis, 1 key), another harness. */
  peerBenchBest: 0.89,
  roundTrips: 1,
};

/** Decisions in flight per contender (bench/notes/method.md §4). */
export const IN_FLIGHT = 50;
/** Decisions in flight while touching every key before the measurements: deeper pipelines, fewer round trips. */
const TOUCH_IN_FLIGHT = 200;
/** Decisions captured with MONITOR per contender, to count round trips. */
const MONITORED_DECISIONS = 1_000;
/** Keys of the "many keys" scenario under --quick: touching 100k keys per contender would take most of the minute. */
const QUICK_KEYS = 10_000;

/**
 * The part's counts, derived from the shared options so that `--rounds` and
 * `--slice-ms` still steer it: rounds are half of `--rounds` rounded up
 * (10 → 5, the peer method's), a slice is 2 × `--slice-ms` (250 → 500 ms;
 * the peer method's 700 ms with one client, shortened because every round
 * here holds three clients' sandwiches), the warm-up is half of
 * `--warmup-ms` (every key was touched just before it).
 */
export function storeCounts(options) {
  return {
    rounds: Math.max(1, Math.ceil(options.rounds / 2)),
    sliceMs: Math.round(options.sliceMs * 2),
    warmupMs: Math.round(options.warmupMs / 2),
    keys: options.quick ? Math.min(options.keys, QUICK_KEYS) : options.keys,
    monitored: options.quick ? 200 : MONITORED_DECISIONS,
  };
}

/**
 * Which clients and variants run. `--variants` may name variants (`gcra`),
 * clients (`ioredis`) or both (`ioredis/gcra`); unnamed dimensions take
 * their defaults (every client; the default variants). Baselines always run.
 */
export function chooseContenders(selectors, against) {
  const clientIds = new Set(CLIENTS.map((c) => c.id));
  const variantIds = new Set(VARIANTS.map((v) => v.id));
  const pairs = [];
  const wantedClients = [];
  const wantedVariants = [];
  for (const s of selectors ?? []) {
    if (s.includes('/')) pairs.push(s);
    else if (clientIds.has(s)) wantedClients.push(s);
    else if (variantIds.has(s)) wantedVariants.push(s);
    else if (s === 'all') wantedVariants.push(...variantIds);
  }
  const clients = wantedClients.length > 0 || wantedVariants.length > 0 || pairs.length === 0 ? CLIENTS.filter((c) => wantedClients.length === 0 || wantedClients.includes(c.id)) : [];
  const chosen = [];
  for (const client of CLIENTS) {
    const variants = VARIANTS.filter(
      (v) =>
        (v.clients === undefined || v.clients.includes(client.id)) &&
        (v.reference || pairs.includes(`${client.id}/${v.id}`) || (clients.includes(client) && (wantedVariants.length === 0 ? v.default : wantedVariants.includes(v.id)))),
    );
    if (variants.length > 1) chosen.push({ client, variants: against === undefined ? variants : withTwins(variants, against) });
  }
  return chosen;
}

/** With --against, each of our variants followed by its twin: the same contender on the ref's packages (lib/against.mjs). */
function withTwins(variants, against) {
  return variants.flatMap((v) => (v.reference || v.peer ? [v] : [v, { ...v, id: twinOf(v.id), label: `${v.label} @ ${against.short}`, default: false, loneOf: undefined, twin: true }]));
}

/**
 * Parent side: both key scenarios against one Redis server.
 * @returns the figures, JSON-ready
 */
export async function run(options, log) {
  const counts = storeCounts(options);
  const chosen = chooseContenders(options.variants, options.against);
  if (chosen.length === 0) throw new Error(`--variants=${options.variants?.join(',')} names no store contender`);
  if (!process.env.REDIS_URL && !onPath('redis-server')) {
    // A default part: a machine without Redis still gets the other parts' tables.
    const skipped = 'skipped: REDIS_URL is not set and there is no redis-server on PATH';
    log(`store: ${skipped}`);
    return { skipped };
  }
  const server = await openRedis();
  log(`store: ${server.own ? 'started redis-server' : 'REDIS_URL'} ${server.url} (Redis ${server.version})`);
  const runId = `${process.pid}-${Date.now().toString(36)}`;
  const admin = await adminClient(server.url);
  const random = seededRandom(options.seed);
  const scenarios = [
    { id: 'hot', title: '1 key', keyCount: 1 },
    { id: 'many', title: `${formatCount(counts.keys)} keys`, keyCount: counts.keys },
  ];
  const results = { scenarios: {} };
  try {
    for (const scenario of scenarios) {
      results.scenarios[scenario.id] = {
        title: scenario.title,
        keyCount: scenario.keyCount,
        ...(await runScenario({ scenario, chosen, counts, server, admin, runId, random, log, against: options.against })),
      };
    }
    results.usedMemory = /used_memory_human:(\S+)/.exec(await admin.info('memory'))?.[1];
  } finally {
    if (!server.own) await deleteKeys(admin, `ratekit-bench:${runId}:*`).catch(() => {});
    admin.disconnect();
    await server.stop();
  }
  results.config = {
    ...counts,
    inFlight: IN_FLIGHT,
    seed: options.seed,
    limit: LIMIT,
    against: options.against === undefined ? undefined : { ref: options.against.ref, short: options.against.short },
    target: TARGET,
    server: { own: server.own, url: server.own ? 'private redis-server on a loopback port' : 'REDIS_URL', version: server.version },
  };
  results.versions = storeVersions();
  results.clients = chosen.map(({ client, variants }) => ({
    ...client,
    contenders: variants.map(({ id, label, what, reference, peer, limits, twin }) => ({
      id: `${client.id}/${id}`,
      variant: id,
      label,
      what,
      reference: reference === true,
      peer: peer === true,
      twin: twin === true,
      limits,
    })),
  }));
  return results;
}

async function runScenario({ scenario, chosen, counts, server, admin, runId, random, log, against }) {
  const prefixOf = (id) => `ratekit-bench:${runId}:${scenario.id}:${id.replace('/', ':')}:`;
  const ids = chosen.flatMap(({ client, variants }) => variants.map((v) => `${client.id}/${v.id}`));
  if (server.own) await admin.flushall();
  log(`store, ${scenario.title}: starting ${ids.length} processes (${chosen.map((c) => c.client.id).join(', ')})`);
  const children = new Map(ids.map((id) => [id, startChild(WORKER, { label: `${id} (${scenario.title})`, ...(isTwin(id) ? twinProcess(against) : {}) })]));
  const out = {};
  let contenders;
  try {
    // Connect, touch every key and warm up, one process at a time: with all at once, 15 busy
    // clients would leave the single-threaded Redis a sixteenth of the CPU.
    const sanity = new Map(ids.map((id) => [id, []]));
    for (const id of ids) {
      const [client, variant] = id.split('/');
      const child = children.get(id);
      const ready = await child.request({
        cmd: 'prepare',
        client,
        variant: untwinned(variant),
        url: server.url,
        prefix: prefixOf(id),
        keyCount: scenario.keyCount,
        inFlight: IN_FLIGHT,
        touchInFlight: TOUCH_IN_FLIGHT,
      });
      sanity.get(id).push(ready.sanity);
      sanity.get(id).push((await child.request({ cmd: 'warmup', ms: counts.warmupMs })).sanity);
    }
    // Round trips, by command: who sent each command the server ran.
    const monitored = new Map();
    for (const id of ids) {
      const before = await readCounters(admin);
      const { fromClients, fromScripts, result } = await monitorWhile(admin, () => children.get(id).request({ cmd: 'count', ops: counts.monitored }));
      const delta = counterDelta(before, await readCounters(admin));
      // The parent's commands meanwhile: MONITOR, the marker ECHO, HELLO (INFO is left out of every delta).
      delete delta.commands.monitor;
      delete delta.commands.echo;
      delete delta.commands.hello; // the monitor connection's handshake, which MONITOR does not show
      const seen = { ...fromClients };
      for (const [name, n] of Object.entries(fromScripts)) seen[name] = (seen[name] ?? 0) + n;
      const differ = Object.keys({ ...seen, ...delta.commands }).filter((name) => (seen[name] ?? 0) !== (delta.commands[name]?.calls ?? 0));
      if (differ.length > 0) {
        const show = (name) => `${name} ${seen[name] ?? 0} vs ${delta.commands[name]?.calls ?? 0}`;
        sanity.get(id).push(`MONITOR and commandstats disagree (${differ.map(show).join(', ')})`);
      }
      monitored.set(id, { decisions: result.ops, fromClients, fromScripts });
    }
    log(`store, ${scenario.title}: ${counts.rounds} rounds of ${counts.sliceMs} ms slices`);
    const totals = new Map(ids.map((id) => [id, { ops: 0, commands: {}, cpuUs: 0, reads: 0 }]));
    let lastRound = 0;
    ({ contenders } = await runClientSandwiches({
      clients: chosen.map(({ client, variants }) => ({
        id: client.id,
        baseline: `${client.id}/${variants.find((v) => v.reference).id}`,
        variants: variants.filter((v) => !v.reference).map((v) => `${client.id}/${v.id}`),
      })),
      rounds: counts.rounds,
      random,
      measure: async (id) => {
        const before = await readCounters(admin);
        const slice = await children.get(id).request({ cmd: 'slice', ms: counts.sliceMs });
        const total = totals.get(id);
        addDelta(total, counterDelta(before, await readCounters(admin)));
        total.ops += slice.ops;
        return slice;
      },
      onSlice: ({ round }) => {
        if (round !== lastRound) log(`store, ${scenario.title}: round ${(lastRound = round)}/${counts.rounds}`);
      },
    }));
    const lone = await loneLatencies({ chosen, children, counts, log, title: scenario.title });
    for (const id of ids) sanity.get(id).push((await children.get(id).request({ cmd: 'finish' })).sanity);
    // Every contender's keys, in one SCAN: `ratekit-bench:<run>:<scenario>:<client>:<variant>:…`.
    // The lone step's twin writes under `<contender's prefix>lone:`: its keys are its own group, not the contender's.
    const held = await inspectKeys(admin, `ratekit-bench:${runId}:${scenario.id}:*`, (key) => {
      const parts = key.split(':');
      return `${parts.slice(3, 5).join('/')}${parts[5] === 'lone' ? ' (lone twin)' : ''}`;
    });
    for (const id of ids) {
      const problems = sanity.get(id);
      const variant = VARIANTS.find((v) => v.id === untwinned(id.split('/')[1]));
      const keys = held.get(id) ?? { count: 0, sampled: 0, withoutTtl: 0 };
      // Keys whose state is worth nothing once idle (a GCRA far from its limit) expire about 2 s after their last decision.
      if (variant.idleKeysExpire ? keys.count > scenario.keyCount : keys.count !== scenario.keyCount) {
        problems.push(`Redis holds ${keys.count} keys of it, expected ${variant.idleKeysExpire ? 'at most ' : ''}${scenario.keyCount}`);
      }
      if (!variant.reference && keys.withoutTtl > 0) problems.push(`${keys.withoutTtl} of ${keys.sampled} keys sampled have no TTL`);
      const found = [...new Set(problems.filter((p) => p !== 'ok'))];
      const { sliceRecords, ...figures } = contenders.get(id);
      out[id] = {
        ...figures,
        sanity: found.length === 0 ? 'ok' : found.join('; '),
        perDecision: perDecision(totals.get(id), sliceRecords),
        roundTrips: roundTrips(monitored.get(id)),
        ...(lone.has(id) ? { lone: lone.get(id) } : {}),
      };
    }
  } finally {
    await Promise.all([...children.values()].map((child) => child.close()));
    if (!server.own) await deleteKeys(admin, `ratekit-bench:${runId}:${scenario.id}:*`);
  }
  judge(out, chosen);
  return { results: out, clientsCompared: compareClients(contenders, chosen), loadAverage: os.loadavg().map((n) => Number(n.toFixed(2))) };
}

/**
 * A lone decision's latency, coalescing on against off: each coalescing
 * contender with a twin without coalescing (a variant whose `loneOf` names
 * it) times one decision at a time, alternating decision by decision with
 * the twin on the same connection (store-worker.mjs, `lone`), for `rounds`
 * slices.
 * @returns per contender id: median and p99 µs of both (medians over rounds), and the median over
 *   rounds of the ratio of the two medians
 */
async function loneLatencies({ chosen, children, counts, log, title }) {
  const twins = [];
  for (const { client, variants } of chosen) {
    for (const v of variants) {
      const twin = VARIANTS.find((t) => t.loneOf === v.id && (t.clients === undefined || t.clients.includes(client.id)));
      if (twin !== undefined) twins.push([`${client.id}/${v.id}`, twin.id]);
    }
  }
  const out = new Map();
  if (twins.length === 0) return out;
  log(`store, ${title}: a lone decision's latency, coalescing on and off, ${counts.rounds} rounds of ${counts.sliceMs} ms`);
  for (const [id, twin] of twins) {
    const slices = [];
    for (let round = 0; round < counts.rounds; round++) slices.push(await children.get(id).request({ cmd: 'lone', ms: counts.sliceMs, twin }));
    out.set(id, {
      decisions: slices.reduce((n, s) => n + s.ops, 0),
      medianUs: median(slices.map((s) => s.medianUs)),
      p99Us: median(slices.map((s) => s.p99Us)),
      offMedianUs: median(slices.map((s) => s.twinMedianUs)),
      offP99Us: median(slices.map((s) => s.twinP99Us)),
      ratioToOff: median(slices.map((s) => s.medianUs / s.twinMedianUs)),
    });
  }
  return out;
}

/** Server and client cost per decision, from the counters summed over every measured slice. */
function perDecision(total, slices) {
  const scripts = ['evalsha', 'eval', 'evalsha_ro', 'eval_ro', 'fcall', 'fcall_ro'].map((n) => total.commands[n]).filter(Boolean);
  const scriptCalls = sum(scripts.map((c) => c.calls));
  const commands = Object.fromEntries(Object.entries(total.commands).map(([name, c]) => [name, c.calls / total.ops]));
  const clientCpuUs = median(slices.map((s) => (s.cpuMs * 1_000) / s.ops));
  return {
    decisions: total.ops,
    /** evalsha + eval (+ their _ro and fcall forms) per decision: exactly 1 for one script round trip. */
    scripts: scriptCalls / total.ops,
    scriptsExact: scriptCalls === total.ops,
    /** Every command the server counted, the ones run inside scripts included. */
    commands: sum(Object.values(total.commands).map((c) => c.calls)) / total.ops,
    commandsByName: commands,
    /** Server time inside the script calls (commandstats usec), per call. */
    scriptUsPerCall: scriptCalls === 0 ? Number.NaN : sum(scripts.map((c) => c.usec)) / scriptCalls,
    /** The Redis process's CPU time (INFO cpu, user + sys) per decision: parsing, networking and scripts. */
    serverCpuUs: total.cpuUs / total.ops,
    /** This contender's process CPU time per decision (median over slices). */
    clientCpuUs,
    /**
     * Decisions per socket read of the server (INFO stats total_reads_processed): how the client's
     * in-flight requests reach Redis. Redis reads at most 16 KB of a client's requests at a time and
     * answers what it has read before reading more, so 50 requests of more than about 330 bytes
     * arrive in two reads and their replies in two writes: the client works on the first half's
     * replies while Redis runs the second half (bench/notes/redis-floors.md, "Fixed window on node-redis").
     */
    decisionsPerRead: total.ops / total.reads,
  };
}

/** Commands sent by the client per decision (round trips), and run from scripts, from the MONITOR capture. */
function roundTrips({ decisions, fromClients, fromScripts }) {
  const sent = sum(Object.values(fromClients));
  return {
    decisions,
    perDecision: sent / decisions,
    exact: sent === decisions,
    sentByName: fromClients,
    inScriptsPerDecision: sum(Object.values(fromScripts)) / decisions,
    inScriptsByName: Object.fromEntries(Object.entries(fromScripts).map(([name, n]) => [name, n / decisions])),
  };
}

/**
 * The targets, per contender: ≥ 0.9× its client's trivial script; above
 * every peer measured in the same run on the same client and key count
 * (the issue's "measured in the same run"; bench/notes/method.md's figures come
 * from another harness); exactly one round trip.
 */
function judge(out, chosen) {
  for (const { client, variants } of chosen) {
    const peerRatios = variants.filter((v) => v.peer).map((v) => out[`${client.id}/${v.id}`].ratio.median);
    for (const v of variants) {
      const r = out[`${client.id}/${v.id}`];
      if (v.reference) continue;
      r.target = {
        throughput: r.ratio.median >= TARGET.min,
        abovePeers: v.peer || peerRatios.length === 0 ? undefined : r.ratio.median > Math.max(...peerRatios),
        // At most one: coalescing sends one call for the decisions of a turn.
        oneRoundTrip: r.roundTrips.perDecision <= 1 + 1e-9 && r.perDecision.scripts <= 1 + 1e-9,
      };
    }
  }
}

/** Each client against node-redis (the first client), on the same variant, per round. */
function compareClients(contenders, chosen) {
  const reference = chosen[0].client.id;
  const out = {};
  for (const { client, variants } of chosen) {
    for (const v of variants) {
      const ratio = crossRatio(contenders, `${client.id}/${v.id}`, `${reference}/${v.id}`);
      if (ratio !== undefined) out[`${client.id}/${v.id}`] = { reference: `${reference}/${v.id}`, ...ratio };
    }
  }
  return out;
}

/** The tables of this part, as Markdown. */
export function render(results) {
  if (results.skipped) return `## Redis-backed decisions\n\n${results.skipped}.`;
  const { config, scenarios } = results;
  const hot = scenarios.hot;
  const many = scenarios.many;
  const yes = (ok) => (ok === undefined ? '' : ok ? '✓' : '✗');
  const ratioCell = (r) => (r.ratios.length === 0 ? '1 (ref)' : formatRatio(r.ratio));
  const tripsCell = (r) => {
    const names = Object.entries(r.roundTrips.sentByName).map(([name, n]) => `${name}${n === r.roundTrips.decisions ? '' : ` ×${(n / r.roundTrips.decisions).toFixed(2)}`}`);
    return `${fmt(r.roundTrips.perDecision, 2)} (${names.join(' + ')})`;
  };
  const rows = [];
  const costRows = [];
  const clientRows = [];
  for (const client of results.clients) {
    for (const c of client.contenders) {
      const h = hot.results[c.id];
      const m = many.results[c.id];
      const sanity = h.sanity === 'ok' && m.sanity === 'ok' ? 'ok' : `1 key: ${h.sanity}; ${many.title}: ${m.sanity}`;
      const name = c.reference ? `**${c.label}**` : c.peer ? `_${c.label}_` : c.label;
      rows.push([
        client.label,
        name,
        sanity,
        formatRate(h.rate),
        ratioCell(h),
        formatPercent(h.spread),
        targetCell(h),
        formatRate(m.rate),
        ratioCell(m),
        formatPercent(m.spread),
        targetCell(m),
        tripsCell(h),
        `${fmt(h.perDecision.scripts, 3)} / ${fmt(m.perDecision.scripts, 3)}`,
        c.reference ? '' : yes(h.target.oneRoundTrip && m.target.oneRoundTrip),
      ]);
      costRows.push([
        client.label,
        name,
        `${fmt(h.perDecision.clientCpuUs, 1)} / ${fmt(m.perDecision.clientCpuUs, 1)}`,
        `${fmt(h.perDecision.serverCpuUs, 1)} / ${fmt(m.perDecision.serverCpuUs, 1)}`,
        `${fmt(h.perDecision.scriptUsPerCall, 2)} / ${fmt(m.perDecision.scriptUsPerCall, 2)}`,
        `${fmt(h.perDecision.commands, 2)} / ${fmt(m.perDecision.commands, 2)}`,
        `${fmt(h.perDecision.decisionsPerRead, 1)} / ${fmt(m.perDecision.decisionsPerRead, 1)}`,
        inScripts(m.roundTrips),
      ]);
      const ch = hot.clientsCompared[c.id];
      const cm = many.clientsCompared[c.id];
      if (ch !== undefined && (c.reference || c.variant === 'gcra' || c.variant === 'policy' || c.peer)) {
        clientRows.push([client.label, name, ch.reference === c.id ? '1 (ref)' : formatRatio(ch), cm.reference === c.id ? '1 (ref)' : formatRatio(cm)]);
      }
    }
  }
  const targetTitle = `≥${config.target.min}×, > peers`; // each cell: '✓'/'✗' for both; 'n/a' for a peer itself
  const throughput = renderTable(
    [
      { title: 'client' },
      { title: 'contender' },
      { title: 'sanity' },
      { title: '1 key: ops/s', align: 'right' },
      { title: 'ratio', align: 'right' },
      { title: 'spread', align: 'right' },
      { title: targetTitle },
      { title: `${many.title}: ops/s`, align: 'right' },
      { title: 'ratio', align: 'right' },
      { title: 'spread', align: 'right' },
      { title: targetTitle },
      { title: 'round trips / decision (MONITOR, 1 key)' },
      { title: 'script calls / decision (commandstats: evalsha, eval, fcall; 1 key / many)', align: 'right' },
      { title: 'at most one round trip' },
    ],
    rows,
  );
  const cost = renderTable(
    [
      { title: 'client' },
      { title: 'contender' },
      { title: 'client CPU µs / decision', align: 'right' },
      { title: 'Redis CPU µs / decision', align: 'right' },
      { title: 'script µs / call (usec_per_call)', align: 'right' },
      { title: 'commands / decision (incl. in scripts)', align: 'right' },
      { title: 'decisions / Redis socket read', align: 'right' },
      { title: `run inside the script, per decision (${many.title})` },
    ],
    costRows,
  );
  const clients = renderTable(
    [{ title: 'client' }, { title: 'contender' }, { title: '1 key: ops/s vs node-redis, same contender', align: 'right' }, { title: `${many.title}: ops/s vs node-redis`, align: 'right' }],
    clientRows,
  );
  const coalescing = renderCoalescing(results);
  const versusRef = renderAgainst(results);
  const v = results.versions;
  const intro = [
    `## Redis-backed decisions (Redis ${config.server.version}, ${config.server.url}, ${config.inFlight} in flight per client)`,
    '',
    `One contender per process, one connection each, ${config.inFlight} decisions in flight, keys round-robin over 1 key or ${many.title} (every key touched once, then ${config.warmupMs} ms warm-up). ` +
      `${config.rounds} rounds of ${config.sliceMs} ms slices; in each round every client's contenders run between slices of the same client's **trivial EVALSHA** ` +
      `(\`return redis.call('INCR', KEYS[1])\`, the least one atomic round trip can do: ratio 1), clients and contenders in a shuffled order (seed ${config.seed}). ` +
      'ops/s = median over slices; ratio = median over rounds of (contender ÷ mean of the two adjacent baseline slices), [min–max] over rounds. ' +
      `Limits: ${config.limit.toExponential()} per hour (policy: 1e6/s GCRA + 1e9/h fixed window), never reached; every decision writes. ` +
      `Targets (issue 4), judged on the median ratio: ≥ ${config.target.min}× the trivial script on the same client, and above every peer measured in this run on the same client and key count (_rate-limiter-flexible_, _rate-limit-redis_; on ioredis also _@fastify/rate-limit RedisStore_ and _koa-ratelimit (redis driver)_, which need ioredis' defineCommand; ` +
      `bench/notes/method.md §4 reports ${config.target.peerBenchBest}× for it with another harness, whose baseline ran at 71 k/s), ` +
      'at most one round trip per decision (one when alone; ours coalesce the decisions of a turn into one call, so fewer). Round trips: the commands the server received from the client during ' +
      `${hot.results[results.clients[0].contenders[0].id].roundTrips.decisions} decisions under MONITOR (commands run from inside scripts are not round trips); ` +
      'Script calls per decision: evalsha + eval + fcall (and their _ro forms), INFO commandstats deltas over every measured slice.',
    '',
    throughput,
    '',
    `### Cost per decision (1 key / ${many.title})`,
    '',
    'Client CPU: the contender process (user + sys) per decision, median over slices. Redis CPU: INFO cpu of the server per decision over the measured slices. ' +
      'Script µs / call: commandstats usec of evalsha+eval+fcall per call (time inside the script, its redis.call()s included). ' +
      "Decisions / Redis socket read: INFO stats total_reads_processed over the measured slices. Redis reads at most 16 KB of one client's requests at a time and answers them before it reads on, " +
      `so ${config.inFlight} requests of more than about ${Math.floor(16_384 / config.inFlight)} bytes reach it in two reads, and the client works on the first replies while Redis runs the rest: ` +
      'about half the in-flight count here means that overlap, which the closed loop of this harness rewards (bench/notes/redis-floors.md, "Fixed window on node-redis"). ' +
      'On 2 cores, client and server compete for the same CPUs, so both costs bound the throughput.',
    '',
    cost,
    '',
    coalescing,
    '',
    ...(versusRef === undefined ? [] : [versusRef, '']),
    '### The clients compared',
    '',
    'Per round, the mean rate of a contender on one client ÷ the same contender on node-redis in the same round (client blocks are seconds apart, not adjacent: read the range).',
    '',
    clients,
    '',
    `Versions: redis ${v.redis} (@redis/client ${v['@redis/client']}), ioredis ${v.ioredis}, rate-limiter-flexible ${v['rate-limiter-flexible']}, rate-limit-redis ${v['rate-limit-redis']}, @fastify/rate-limit ${v['@fastify/rate-limit']}, koa-ratelimit ${v['koa-ratelimit']} (async-ratelimiter ${v['async-ratelimiter']}). ` +
      `Load average after the 1 key scenario: ${hot.loadAverage.join(' ')}; after ${many.title}: ${many.loadAverage.join(' ')}. Redis used_memory at the end: ${results.usedMemory}.`,
  ].join('\n');
  return intro;
}

/**
 * The coalescing targets. Issue 26: against rate-limiter-flexible on the same client and key count, and a lone
 * decision against the same store with coalescing off. Issue 31: coalescing on never below off (median over rounds of
 * the per-round ratio of the two, each against its adjacent trivial-EVALSHA slices), and the fixed window at least the
 * trivial EVALSHA itself.
 */
export const COALESCING_TARGET = { throughputVsPeer: 1.5, serverCpuVsPeer: 0.5, loneLatencyVsOff: 1.05, onVsOff: 1, fixedWindowVsBaseline: 1 };

/** Median over rounds of on ÷ off, from each one's per-round ratio to the baseline (same rounds, same baseline). */
export function onOffRatio(on, off) {
  const n = Math.min(on.ratios.length, off.ratios.length);
  if (n === 0) return Number.NaN;
  return median(on.ratios.slice(0, n).map((r, i) => r / off.ratios[i]));
}

/** The coalescing table: ratekit (coalescing on, the default) against itself with coalescing off, the trivial EVALSHA and rate-limiter-flexible. */
function renderCoalescing(results) {
  const { scenarios } = results;
  const rows = [];
  const mark = (ok) => (ok ? '✓' : '✗');
  for (const client of results.clients) {
    const peer = client.contenders.find((c) => c.variant === 'rlf');
    for (const c of client.contenders) {
      const twin = client.contenders.find((t) => t.variant === `${c.variant}-lone`);
      if (c.reference || c.peer || c.variant.endsWith('-lone') || (twin === undefined && !['gcra', 'fixed-window', 'policy'].includes(c.variant))) continue;
      for (const scenario of [scenarios.hot, scenarios.many]) {
        const r = scenario.results[c.id];
        const p = peer === undefined ? undefined : scenario.results[peer.id];
        const off = twin === undefined ? undefined : scenario.results[twin.id];
        const vsOff = off === undefined ? Number.NaN : onOffRatio(r, off);
        const base = r.ratio.median;
        const rate = p === undefined ? Number.NaN : r.rate / p.rate;
        const cpu = p === undefined ? Number.NaN : r.perDecision.serverCpuUs / p.perDecision.serverCpuUs;
        const lone = r.lone?.ratioToOff;
        const baseCell = `${fmt(base, 3)}×${off === undefined ? '' : ` (off: ${fmt(off.ratio.median, 3)}×)`}${c.variant === 'fixed-window' ? ` ${mark(base >= COALESCING_TARGET.fixedWindowVsBaseline)}` : ''}`;
        rows.push([
          client.label,
          c.label,
          scenario.title,
          baseCell,
          off === undefined ? 'n/a' : `${fmt(vsOff, 3)}× ${mark(vsOff >= COALESCING_TARGET.onVsOff)}`,
          `${formatRate(r.rate)}${off === undefined ? '' : ` (off: ${formatRate(off.rate)})`}`,
          p === undefined ? 'n/a' : `${fmt(rate, 2)}× ${mark(rate >= COALESCING_TARGET.throughputVsPeer)}`,
          `${fmt(r.perDecision.serverCpuUs, 2)}${off === undefined ? '' : ` (off: ${fmt(off.perDecision.serverCpuUs, 2)})`}`,
          `${fmt(r.perDecision.clientCpuUs, 2)}${off === undefined ? '' : ` (off: ${fmt(off.perDecision.clientCpuUs, 2)})`}`,
          p === undefined ? 'n/a' : `${fmt(cpu, 2)}× ${mark(cpu <= COALESCING_TARGET.serverCpuVsPeer)}`,
          `${fmt(r.perDecision.scripts, 3)} (${fmt(r.perDecision.commands, 2)} commands)`,
          lone === undefined ? '' : `${fmt(r.lone.medianUs, 1)} / ${fmt(r.lone.offMedianUs, 1)} µs: ${fmt(lone, 3)}× ${mark(lone <= COALESCING_TARGET.loneLatencyVsOff)}`,
        ]);
      }
    }
  }
  const table = renderTable(
    [
      { title: 'client' },
      { title: 'contender (coalescing on)' },
      { title: 'keys' },
      { title: `÷ trivial EVALSHA (fixed window ≥ ${COALESCING_TARGET.fixedWindowVsBaseline}×)`, align: 'right' },
      { title: `on ÷ off (≥ ${COALESCING_TARGET.onVsOff}×)`, align: 'right' },
      { title: 'ops/s', align: 'right' },
      { title: `÷ rate-limiter-flexible (≥ ${COALESCING_TARGET.throughputVsPeer}×)`, align: 'right' },
      { title: 'Redis CPU µs / decision', align: 'right' },
      { title: 'client CPU µs / decision', align: 'right' },
      { title: `Redis CPU ÷ rate-limiter-flexible (≤ ${COALESCING_TARGET.serverCpuVsPeer}×)`, align: 'right' },
      { title: 'script calls / decision (commands)', align: 'right' },
      { title: `lone decision, median on / off (≤ ${COALESCING_TARGET.loneLatencyVsOff}×)`, align: 'right' },
    ],
    rows,
  );
  return [
    '### Coalescing (issues 26 and 31)',
    '',
    'The store coalesces the decisions asked in one iteration of the event loop: the first at once, the others in batches (FCALL of the batch function), each sent as soon as it holds its share of the decisions in flight, the rest at the iteration\'s setImmediate (packages/redis/README.md, "Coalescing"). ' +
      '"off" is the same store with `coalesce: false` (one call per decision), measured in the same rounds. ÷ trivial EVALSHA: the main table\'s ratio (median over rounds). ' +
      "On ÷ off: median over rounds of the two per-round ratios' quotient (each against its adjacent baseline slices). ops/s: median over slices; ÷ rate-limiter-flexible: ratio of those medians (same client, same key count). " +
      "Redis CPU: INFO cpu (user + sys) of the server over the measured slices, per decision; client CPU: the contender process's, median over slices. Lone decision: one decision at a time (nothing else in flight), alternating decision by decision with the same store with coalescing off on the same connection (its own keys, touched first); " +
      'median latency per slice, median over rounds; the ratio is the median over rounds of on ÷ off. Read the load average below: on a CPU-starved machine the CPU saved per decision dominates, on a quiet one the overlap of client and server does (bench/notes/coalescing.md).',
    '',
    table,
  ].join('\n');
}

/**
 * With --against: each of our contenders ÷ its twin on the ref, per client and key count. Ratio: median over
 * rounds of the two per-round ratios' quotient (each against its adjacent trivial-EVALSHA slices, so the load of
 * the moment cancels), [min–max] over rounds; Redis and client CPU per decision side by side.
 */
function renderAgainst(results) {
  const against = results.config.against;
  if (against === undefined) return undefined;
  const rows = [];
  for (const client of results.clients) {
    for (const c of client.contenders) {
      const twin = client.contenders.find((t) => t.id === twinOf(c.id));
      if (twin === undefined) continue;
      for (const scenario of [results.scenarios.hot, results.scenarios.many]) {
        const r = scenario.results[c.id];
        const t = scenario.results[twin.id];
        const n = Math.min(r.ratios.length, t.ratios.length);
        const quotients = r.ratios.slice(0, n).map((x, i) => x / t.ratios[i]);
        rows.push([
          client.label,
          c.label,
          scenario.title,
          `${fmt(median(quotients), 3)}× [${fmt(Math.min(...quotients), 3)}–${fmt(Math.max(...quotients), 3)}]`,
          `${formatRate(r.rate)} / ${formatRate(t.rate)}`,
          `${fmt(r.perDecision.serverCpuUs, 2)} / ${fmt(t.perDecision.serverCpuUs, 2)}`,
          `${fmt(r.perDecision.clientCpuUs, 2)} / ${fmt(t.perDecision.clientCpuUs, 2)}`,
          `${fmt(r.perDecision.commands, 2)} / ${fmt(t.perDecision.commands, 2)}`,
        ]);
      }
    }
  }
  return [
    `### This commit against ${against.ref} (${against.short})`,
    '',
    `Each of our contenders ÷ its twin on ${against.short}'s packages (rows "@ ${against.short}" above), same rounds: the median over rounds of the per-round quotient of their ratios to the adjacent trivial-EVALSHA slices, [min–max]; ` +
      'then this commit / the ref: ops/s, Redis CPU µs, client CPU µs and Redis commands per decision.',
    '',
    renderTable(
      [
        { title: 'client' },
        { title: 'contender' },
        { title: 'keys' },
        { title: `this commit ÷ ${against.short}`, align: 'right' },
        { title: 'ops/s', align: 'right' },
        { title: 'Redis CPU µs / decision', align: 'right' },
        { title: 'client CPU µs / decision', align: 'right' },
        { title: 'commands / decision', align: 'right' },
      ],
      rows,
    ),
  ].join('\n');
}

function targetCell(r) {
  if (r.target === undefined) return '';
  const t = r.target.throughput ? '✓' : '✗';
  if (r.target.abovePeers === undefined) return `${t}, n/a`;
  return `${t}, ${r.target.abovePeers ? '✓' : '✗'}`;
}

function inScripts(trips) {
  const entries = Object.entries(trips.inScriptsByName);
  if (entries.length === 0) return '';
  return entries.map(([name, n]) => `${name}${Math.abs(n - 1) < 1e-9 ? '' : ` ×${n.toFixed(2)}`}`).join(', ');
}

function fmt(value, digits) {
  return Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
}

function sum(values) {
  return values.reduce((a, b) => a + b, 0);
}

/** Whether an executable named `name` is on PATH. */
function onPath(name) {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}
