import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { ClusterNode } from './redis-cluster.js';
import { type LocalRedis, startRedis } from './redis-server.js';
import { waitForReplicasInSync } from './replication.js';
import { findBinary, type RunningServer, type ServiceDefinition } from './services.js';

const run = promisify(execFile);

/** Options of {@link startRedisSentinel}. */
export interface StartRedisSentinelOptions {
  /** The redis-server binary; Sentinel is the same binary with `--sentinel`. @default `redis-server` on PATH, else /usr/bin/redis-server */
  binary?: string;
  /** The redis-cli binary, to wait for the set-up. @default `redis-cli` next to `binary`, else on PATH */
  cli?: string;
  /** Replicas of the master. @default 1 */
  replicas?: number;
  /** Sentinel processes. @default 1 */
  sentinels?: number;
  /** Sentinels that must agree the master is down before a failover. @default a majority of `sentinels` */
  quorum?: number;
  /** The name the sentinels monitor the master under, which clients ask for. @default 'ratekit' */
  masterName?: string;
  /** `sentinel down-after-milliseconds`: how long the master may not answer before it is considered down, in ms. @default 1_000 */
  downAfterMs?: number;
  /** `sentinel failover-timeout`, in ms. @default 3_000 */
  failoverTimeoutMs?: number;
  /** How long to wait for the replicas to be in sync and the sentinels to know them all, in ms. @default 20_000 */
  readyTimeoutMs?: number;
}

/** A master, its replicas and the sentinels watching them, started by {@link startRedisSentinel}. */
export interface LocalRedisSentinel extends RunningServer {
  /** The sentinels, comma-separated `127.0.0.1:port` (read it with `parseClusterNodes`). */
  readonly url: string;
  readonly masterName: string;
  /** The sentinels' addresses, as a client's `sentinels` / `sentinelRootNodes`. */
  readonly sentinels: readonly ClusterNode[];
  /** The master as started (a failover makes one of the replicas the master). */
  readonly master: LocalRedis;
  readonly replicas: readonly LocalRedis[];
  /** The master's address as the first sentinel reports it now (`SENTINEL GET-MASTER-ADDR-BY-NAME`). */
  masterAddress(): Promise<ClusterNode>;
}

/**
 * Starts a Redis master with `replicas` replicas and `sentinels` Sentinel
 * processes watching it, all on free loopback ports and without persistence
 * (see {@link startRedis}), and resolves once every replica is in sync and
 * every sentinel knows every replica (and the other sentinels): from then
 * on, killing the master makes the sentinels promote a replica after about
 * `downAfterMs`.
 *
 * `stop()` stops every process and removes their directories.
 *
 * @throws when a binary is missing, a process does not start, or the set-up is not ready in time (the error says what was missing).
 * @example
 * ```ts
 * const sentinel = await startRedisSentinel({ replicas: 1 });
 * const client = new Redis({ sentinels: sentinel.sentinels, name: sentinel.masterName });
 * ```
 */
export async function startRedisSentinel(options: StartRedisSentinelOptions = {}): Promise<LocalRedisSentinel> {
  const binary = options.binary ?? findBinary('redis-server') ?? '/usr/bin/redis-server';
  const cli = options.cli ?? findBinary(join(dirname(binary), 'redis-cli')) ?? findBinary('redis-cli');
  if (cli === undefined) throw new Error('Could not start Redis Sentinel: `redis-cli` was not found next to redis-server or on PATH');
  const replicas = options.replicas ?? 1;
  const sentinels = options.sentinels ?? 1;
  const quorum = options.quorum ?? Math.floor(sentinels / 2) + 1;
  const masterName = options.masterName ?? 'ratekit';
  if (!Number.isInteger(replicas) || replicas < 1) throw new Error(`Expected at least 1 replica, got ${replicas}`);
  if (!Number.isInteger(sentinels) || sentinels < 1 || !Number.isInteger(quorum) || quorum < 1 || quorum > sentinels) {
    throw new Error(`Expected at least 1 sentinel and a quorum between 1 and their number, got ${sentinels} and ${quorum}`);
  }
  const deadline = Date.now() + (options.readyTimeoutMs ?? 20_000);

  const processes: LocalRedis[] = [];
  const stopAll = () => Promise.all(processes.map((p) => p.stop())).then(() => undefined);
  try {
    // A replica's first sync starts at once, not after the default 5 s wait for more replicas.
    const master = await startRedis({ binary, args: ['--repl-diskless-sync-delay', '0'] });
    processes.push(master);
    const started = await Promise.all(Array.from({ length: replicas }, () => startRedis({ binary, args: ['--replicaof', '127.0.0.1', String(master.port), '--repl-diskless-sync-delay', '0'] })));
    processes.push(...started);
    await waitForReplicasInSync(
      cli,
      started.map((r) => r.port),
      Math.max(1_000, deadline - Date.now()),
    );
    const config = [
      `sentinel monitor ${masterName} 127.0.0.1 ${master.port} ${quorum}`,
      `sentinel down-after-milliseconds ${masterName} ${options.downAfterMs ?? 1_000}`,
      `sentinel failover-timeout ${masterName} ${options.failoverTimeoutMs ?? 3_000}`,
      '',
    ].join('\n');
    const watchers = await Promise.all(Array.from({ length: sentinels }, () => startRedis({ binary, config, args: ['--sentinel'] })));
    processes.push(...watchers);
    await waitUntilWatching(cli, watchers, masterName, replicas, Math.max(1_000, deadline - Date.now()));
    const addresses = watchers.map((w) => ({ host: '127.0.0.1', port: w.port }));
    let stopped: Promise<void> | undefined;
    return {
      url: addresses.map((a) => `${a.host}:${a.port}`).join(','),
      masterName,
      sentinels: addresses,
      master,
      replicas: started,
      async masterAddress() {
        const { stdout } = await run(cli, ['-h', '127.0.0.1', '-p', String(watchers[0]!.port), 'sentinel', 'get-master-addr-by-name', masterName], { timeout: 5_000 });
        const [host, port] = stdout.trim().split(/\r?\n/);
        return { host: host!, port: Number(port) };
      },
      stop() {
        stopped ??= stopAll();
        return stopped;
      },
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** Waits until every sentinel reports the master with all its replicas and all the other sentinels. */
async function waitUntilWatching(cli: string, watchers: readonly LocalRedis[], masterName: string, replicas: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    let ready = 0;
    for (const watcher of watchers) {
      const { stdout } = await run(cli, ['-h', '127.0.0.1', '-p', String(watcher.port), 'sentinel', 'master', masterName], { timeout: 5_000 });
      const lines = stdout.split(/\r?\n/);
      const field = (name: string) => lines[lines.indexOf(name) + 1];
      if (field('flags') === 'master' && Number(field('num-slaves')) === replicas && Number(field('num-other-sentinels')) === watchers.length - 1) ready++;
      else last = `sentinel 127.0.0.1:${watcher.port}: flags ${field('flags')}, ${field('num-slaves')} replicas, ${field('num-other-sentinels')} other sentinels`;
    }
    if (ready === watchers.length) return;
    if (Date.now() > deadline) throw new Error(`The sentinels did not see the whole set-up within ${timeoutMs} ms (${last})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A master, one replica and one sentinel of the tests' own (they kill the master): for failover tests. */
export const redisSentinelService: ServiceDefinition = {
  name: 'Redis Sentinel',
  binary: 'redis-server',
  companions: ['redis-cli'],
  start: (binaryPath) => startRedisSentinel({ binary: binaryPath }),
};
