import { performance } from 'node:perf_hooks';
import { createLimiter, type Decision, type Limiter, RateKitError } from '@ratekit/core';
import { describeWithService, freezeProcesses, freshNamespace, type LocalRedis, privateRedisService, StallProbe, startRedis } from '@ratekit/test-utils';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { DECISION_FUNCTION } from './scripts.js';
import { type RedisClientLike, type RedisStore, redisStore } from './store.js';

/**
 * The failure policy against a real redis-server stopped in the middle of a
 * load: first frozen (SIGSTOP: connections stay open, nothing answers), then
 * killed (SIGKILL: connections drop, reconnects are refused), then started
 * again on the same port. Three limiters share one client and store, one
 * per policy: `'allow'`, `'deny'` and a fallback in-memory limiter.
 *
 * Timeline of one run (per client):
 *
 * | phase  | server           | what a decision gets                                                |
 * | ------ | ---------------- | ------------------------------------------------------------------- |
 * | up     | answers          | Redis's decision                                                    |
 * | frozen | SIGSTOP          | the policy, at `storeTimeoutMs`                                     |
 * | thawed | SIGCONT          | Redis's decision                                                    |
 * | dead   | SIGKILL          | the policy, at once (the client fails fast) or at the timeout       |
 * | back   | restarted, empty | the policy until the client has reconnected, then Redis's decision  |
 *
 * The clients are configured as packages/redis/README.md recommends.
 */

const TIMEOUT_MS = 100;
/**
 * What a decision may take beyond the timeout, on top of the time the test
 * process itself was stalled during it (see {@link StallProbe}): timer and
 * scheduling latency.
 */
const SLACK_MS = 100;
/** The stall probe's interval, in ms. */
const PROBE_MS = 10;
/** Every decision of the shared limit fits its budget, so Redis never refuses: a refusal or a full budget can only come from the policy. */
const SHARED_LIMIT = 1_000_000;
const FALLBACK_LIMIT = 3;
const KEYS = 5;
const LOOPS_PER_LIMITER = 3;
/** Pause between a loop's decisions, in ms. */
const PAUSE_MS = 10;

type PolicyName = 'allow' | 'deny' | 'fallback';
type Phase = 'up' | 'frozen' | 'thawed' | 'dead' | 'back';

interface Sample {
  readonly key: string;
  readonly startPhase: Phase;
  readonly endPhase: Phase;
  readonly startedAt: number;
  readonly latencyMs: number;
  readonly decision: Decision;
}

interface Connection {
  client: RedisClientLike;
  /** 'error' events the client emitted. */
  errors: unknown[];
  close(): Promise<void>;
}

/** The two clients, configured for a rate limiter: fail fast while disconnected, keep reconnecting. */
const CLIENTS: Record<string, (url: string) => Promise<Connection>> = {
  'node-redis': async (url) => {
    const errors: unknown[] = [];
    const client = createClient({
      url,
      // A command sent while disconnected fails at once instead of waiting in a queue (and running late).
      disableOfflineQueue: true,
      // Keep reconnecting, every 0.5 s at most; connection attempts give up after 1 s.
      socket: { connectTimeout: 1_000, reconnectStrategy: (retries) => Math.min(50 * 2 ** retries, 500) },
    });
    // Without an 'error' listener, node-redis's first connection error crashes the process.
    client.on('error', (error) => errors.push(error));
    await client.connect();
    return {
      client,
      errors,
      close: async () => {
        client.destroy();
      },
    };
  },
  ioredis: async (url) => {
    const errors: unknown[] = [];
    const client = new Redis(url, {
      enableAutoPipelining: true,
      // A command sent while disconnected fails at once instead of waiting in the offline queue.
      enableOfflineQueue: false,
      // Commands in flight when the connection drops fail at once instead of being resent after a reconnect.
      maxRetriesPerRequest: 0,
      retryStrategy: (times) => Math.min(50 * 2 ** times, 500),
      connectTimeout: 1_000,
    });
    client.on('error', (error) => errors.push(error));
    await new Promise<void>((resolve, reject) => client.once('ready', resolve).once('error', reject));
    return {
      client,
      errors,
      close: async () => {
        client.disconnect();
      },
    };
  },
};

/** What the run recorded for one limiter. */
interface LimiterRun {
  readonly namespace: string;
  readonly samples: Sample[];
  readonly onError: RateKitError[];
}

interface OutageRun {
  readonly limiters: Record<PolicyName, LimiterRun>;
  readonly stalls: StallProbe;
  readonly clientErrors: number;
  /** The restarted server, still running. */
  readonly server: LocalRedis;
  readonly store: RedisStore;
  readonly libraryLoadedAfterRestart: boolean;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Where a decision came from, by its shape (see SHARED_LIMIT). */
function origin(decision: Decision): 'redis' | 'allow' | 'deny' | 'fallback' | 'unexpected' {
  if (decision.limit === FALLBACK_LIMIT) return 'fallback';
  if (decision.limit !== SHARED_LIMIT) return 'unexpected';
  if (decision.allowed && decision.remaining < SHARED_LIMIT) return 'redis';
  if (decision.allowed && decision.remaining === SHARED_LIMIT && decision.retryAfterMs === 0) return 'allow';
  if (!decision.allowed && decision.remaining === SHARED_LIMIT && decision.retryAfterMs === 1_000) return 'deny';
  return 'unexpected';
}

/**
 * Runs the timeline above against `server` with `connect`'s client and
 * resolves with what every limiter saw. The restarted server is handed to
 * `onRestart` as soon as it runs, so that the caller stops it even if the run fails.
 */
async function runOutage(server: LocalRedis, connect: (url: string) => Promise<Connection>, onRestart: (restarted: LocalRedis) => void): Promise<OutageRun> {
  const connection = await connect(server.url);
  const store = redisStore({ client: connection.client, prefix: 'ratekit-outage:' });
  let phase: Phase = 'up';
  let stopped = false;
  let restarted: LocalRedis | undefined;

  const limiters = {} as Record<PolicyName, LimiterRun>;
  const built: Array<[LimiterRun, Limiter]> = [];
  for (const name of ['allow', 'deny', 'fallback'] as const) {
    const run: LimiterRun = { namespace: freshNamespace(name), samples: [], onError: [] };
    const fallback = createLimiter({ limits: { limit: FALLBACK_LIMIT, windowMs: 3_600_000, name: 'local' } });
    const limiter = createLimiter({
      limits: { limit: SHARED_LIMIT, windowMs: 3_600_000, name: 'shared' },
      store,
      prefix: run.namespace,
      onStoreError: name === 'fallback' ? fallback : name,
      storeTimeoutMs: TIMEOUT_MS,
      onError: (error) => run.onError.push(error),
    });
    limiters[name] = run;
    built.push([run, limiter]);
  }

  const loop = async (run: LimiterRun, limiter: Limiter, index: number) => {
    for (let i = 0; !stopped; i++) {
      const key = `user:${(index + i) % KEYS}`;
      const startPhase = phase;
      const startedAt = performance.now();
      const decision = await limiter.consume(key);
      run.samples.push({ key, startPhase, endPhase: phase, startedAt, latencyMs: performance.now() - startedAt, decision });
      await sleep(PAUSE_MS);
    }
  };
  const stalls = new StallProbe(PROBE_MS);
  const loops = built.flatMap(([run, limiter]) => Array.from({ length: LOOPS_PER_LIMITER }, (_, i) => loop(run, limiter, i)));

  try {
    await sleep(300);
    // 'frozen' from when it has stopped: a request sent between the signal and the stop may still be answered.
    await freezeProcesses([server.pid]);
    phase = 'frozen';
    await sleep(600);
    process.kill(server.pid, 'SIGCONT');
    phase = 'thawed';
    await sleep(300);
    process.kill(server.pid, 'SIGKILL');
    phase = 'dead';
    await sleep(600);
    restarted = await startRedis({ port: server.port });
    onRestart(restarted);
    phase = 'back';
    const restartedAt = performance.now();
    // Recovered: every limiter has had a decision from Redis that started after the restart.
    const recovered = () => built.every(([run]) => run.samples.some((s) => s.startedAt > restartedAt && origin(s.decision) === 'redis'));
    const deadline = Date.now() + 10_000;
    while (!recovered() && Date.now() < deadline) await sleep(20);
    await sleep(300);
    const admin = await createClient({ url: restarted.url }).connect();
    try {
      const libraryLoadedAfterRestart = (await admin.sendCommand<unknown[]>(['FUNCTION', 'LIST', 'LIBRARYNAME', DECISION_FUNCTION])).length === 1;
      return { limiters, stalls, clientErrors: connection.errors.length, server: restarted, store, libraryLoadedAfterRestart };
    } finally {
      await admin.quit();
    }
  } finally {
    stopped = true;
    await Promise.all(loops);
    stalls.stop();
    await connection.close();
    if (phase === 'frozen') process.kill(server.pid, 'SIGCONT'); // never leave a stopped process behind
  }
}

describeWithService(privateRedisService, 'redisStore when the Redis server fails mid-load', (server) => {
  /** The server the next run stops: the service's at first, then the one the previous run restarted. */
  let current: LocalRedis;
  const restarted: LocalRedis[] = [];
  beforeAll(() => {
    current = server() as LocalRedis;
    if (typeof current.pid !== 'number') throw new Error('These tests need a redis-server of their own (privateRedisService)');
  });
  afterAll(async () => {
    await Promise.all(restarted.map((r) => r.stop()));
  }, 30_000);

  for (const [clientName, connect] of Object.entries(CLIENTS)) {
    describe(`with ${clientName} (configured as the README recommends), storeTimeoutMs ${TIMEOUT_MS}`, () => {
      let run: OutageRun;
      beforeAll(async () => {
        const stopped = current;
        try {
          run = await runOutage(stopped, connect, (server) => {
            current = server;
            restarted.push(server);
          });
        } finally {
          await stopped.stop(); // normally dead already: this reaps it and removes its directory
        }
      }, 30_000);

      const during = (samples: readonly Sample[], ...phases: Phase[]) => samples.filter((s) => s.startPhase === s.endPhase && phases.includes(s.startPhase));
      const policyAnswers = (samples: readonly Sample[]) => samples.filter((s) => origin(s.decision) !== 'redis');

      it.each([
        ['allow', 'allows every request (fail open)'],
        ['deny', 'refuses every request with a retry of 1 s (fail closed)'],
        ['fallback', `hands every request to the in-memory limiter, which admits ${FALLBACK_LIMIT} per key`],
      ] as const)("onStoreError '%s': while the server is frozen or dead, the limiter %s, and reports each failure to onError", (name, _outcome) => {
        const { samples, onError } = run.limiters[name];
        const outage = during(samples, 'frozen', 'dead');
        expect(during(samples, 'frozen').length).toBeGreaterThanOrEqual(2);
        expect(during(samples, 'dead').length).toBeGreaterThanOrEqual(2);
        expect(new Set(outage.map((s) => origin(s.decision)))).toEqual(new Set([name]));
        // Every answer is Redis's or the policy's, and every policy answer had exactly one onError call.
        expect(samples.filter((s) => !['redis', name].includes(origin(s.decision)))).toEqual([]);
        expect(onError).toHaveLength(policyAnswers(samples).length);
        expect(onError.every((e) => e instanceof RateKitError && e.code === 'ERR_RATEKIT_STORE')).toBe(true);
        if (name === 'fallback') {
          for (let k = 0; k < KEYS; k++) {
            const local = policyAnswers(samples).filter((s) => s.key === `user:${k}`);
            expect(local.filter((s) => s.decision.allowed)).toHaveLength(Math.min(FALLBACK_LIMIT, local.length));
          }
        }
      });

      /** A decision's latency less the longest stall of the test process while it ran. */
      const waited = (sample: Sample) => sample.latencyMs - run.stalls.longestStall(sample.startedAt, sample.startedAt + sample.latencyMs);

      it(`no decision waits longer than the timeout (+${SLACK_MS} ms, + any stall of the test process); a frozen server is answered by the timeout, a dead one at once`, () => {
        const all = Object.values(run.limiters).flatMap((l) => l.samples);
        const late = all.filter((s) => waited(s) >= TIMEOUT_MS + SLACK_MS);
        expect(late.map((s) => ({ phase: s.startPhase, latencyMs: s.latencyMs, waitedMs: waited(s) }))).toEqual([]);
        const frozen = during(all, 'frozen');
        expect(Math.min(...frozen.map((s) => s.latencyMs))).toBeGreaterThanOrEqual(TIMEOUT_MS - 1);
        // The client fails fast on a dead server: most decisions do not even wait for the timeout.
        const dead = during(all, 'dead');
        expect(dead.filter((s) => waited(s) < TIMEOUT_MS / 2).length).toBeGreaterThan(dead.length / 2);
      });

      it('before the outage, between the two failures and once reconnected, no decision fails: each comes from Redis (or, on a stalled event loop, from the timeout)', () => {
        // A policy answer while the server is up can only be a timeout (the test process itself
        // stalled past the timeout, as on a busy CI machine), never a failed connection: it took
        // the whole timeout. And most decisions come from Redis (on a quiet machine, all do).
        const healthy = (samples: readonly Sample[]) => {
          expect(samples.filter((s) => origin(s.decision) !== 'redis' && s.latencyMs < TIMEOUT_MS - 1)).toEqual([]);
          expect(samples.filter((s) => origin(s.decision) === 'redis').length).toBeGreaterThan(samples.length / 2);
        };
        for (const { samples } of Object.values(run.limiters)) {
          const up = during(samples, 'up', 'thawed');
          expect(up.length).toBeGreaterThan(5);
          healthy(up);
          const firstBack = samples.findIndex((s) => s.startPhase === 'back' && origin(s.decision) === 'redis');
          expect(firstBack).toBeGreaterThan(-1);
          const reconnectedAt = samples[firstBack]!.startedAt + samples[firstBack]!.latencyMs;
          const afterwards = samples.slice(firstBack).filter((s) => s.startedAt >= reconnectedAt);
          expect(afterwards.length).toBeGreaterThan(5);
          healthy(afterwards);
        }
        expect(run.clientErrors).toBeGreaterThan(0);
      });

      it('recovers without a new client: the restarted server holds the new state and has the function library again', async () => {
        expect(run.libraryLoadedAfterRestart).toBe(true);
        const admin = await createClient({ url: run.server.url }).connect();
        try {
          for (const { namespace } of Object.values(run.limiters)) {
            expect(await admin.hExists(run.store.keyFor('user:0', namespace), 'fixed-window:shared')).toBe(1);
          }
        } finally {
          await admin.quit();
        }
      });
    });
  }
});
