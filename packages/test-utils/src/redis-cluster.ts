import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { onFreePort } from './ports.js';
import { type LocalRedis, startRedis } from './redis-server.js';
import { replicationInfo, waitForReplicasInSync } from './replication.js';
import { findBinary, type RunningServer, type ServiceDefinition } from './services.js';

const run = promisify(execFile);

/** One node of a Redis Cluster, as a client's seed. */
export interface ClusterNode {
  readonly host: string;
  readonly port: number;
}

/** Options of {@link startRedisCluster}. */
export interface StartRedisClusterOptions {
  /** The redis-server binary (Redis 7 or later: each node's bus port is set with `--cluster-port`). @default `redis-server` on PATH, else /usr/bin/redis-server */
  binary?: string;
  /** The redis-cli binary that forms the cluster. @default `redis-cli` next to `binary`, else on PATH */
  cli?: string;
  /** How many masters. `redis-cli --cluster create` needs at least 3. @default 3 */
  masters?: number;
  /**
   * How many replicas per master. With replicas, the cluster is returned
   * once every replica is in sync with its master (a replica that never
   * synced is not promoted). @default 0
   */
  replicas?: number;
  /** `cluster-node-timeout`: how long a master may be unreachable before its replica is promoted, in ms. @default 5_000 */
  nodeTimeoutMs?: number;
  /** Extra `redis-server` arguments for every node, e.g. `['--cluster-require-full-coverage', 'no']`. */
  args?: readonly string[];
  /** How long to wait for `cluster_state:ok` on every node once the cluster is formed, in ms. @default 20_000 */
  readyTimeoutMs?: number;
}

/** A Redis Cluster started by {@link startRedisCluster}. */
export interface LocalRedisCluster extends RunningServer {
  /** The nodes as `REDIS_CLUSTER_NODES` spells them: `127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3`. */
  readonly url: string;
  readonly nodes: readonly ClusterNode[];
  /** The redis-server processes, one per node (masters and replicas; `CLUSTER NODES` says which is which). */
  readonly servers: readonly LocalRedis[];
}

/**
 * Starts a Redis Cluster of `masters` masters, each with `replicas`
 * replicas (none by default), on free loopback ports, from the redis-server
 * on the machine:
 *
 * 1. one `redis-server --cluster-enabled yes --cluster-config-file nodes.conf
 *    --cluster-port <free port> --cluster-node-timeout <nodeTimeoutMs>` per
 *    node, each in a temporary directory of its own, without persistence
 *    (see {@link startRedis});
 * 2. `redis-cli --cluster create <nodes> --cluster-replicas <replicas> --cluster-yes`,
 *    which splits the 16,384 slots evenly over the masters;
 * 3. waits until `CLUSTER INFO` says `cluster_state:ok` on every node, and
 *    every replica is in sync with its master.
 *
 * `stop()` kills the servers and removes their directories.
 *
 * @throws when a binary is missing, a server does not start, the cluster cannot be formed or is not ok in time (the error says which, with the tool's output).
 * @example
 * ```ts
 * const cluster = await startRedisCluster();
 * const client = await createCluster({ rootNodes: cluster.nodes.map((n) => ({ url: `redis://${n.host}:${n.port}` })) }).connect();
 * // ...
 * await client.quit();
 * await cluster.stop();
 * ```
 */
export async function startRedisCluster(options: StartRedisClusterOptions = {}): Promise<LocalRedisCluster> {
  const binary = options.binary ?? findBinary('redis-server') ?? '/usr/bin/redis-server';
  const cli = options.cli ?? findBinary(join(dirname(binary), 'redis-cli')) ?? findBinary('redis-cli');
  if (cli === undefined) throw new Error('Could not start a Redis Cluster: `redis-cli` was not found next to redis-server or on PATH');
  const masters = options.masters ?? 3;
  if (!Number.isInteger(masters) || masters < 3) throw new Error(`A Redis Cluster needs at least 3 masters, got ${masters}`);
  const replicas = options.replicas ?? 0;
  if (!Number.isInteger(replicas) || replicas < 0) throw new Error(`Expected a whole number of replicas per master, got ${replicas}`);
  const nodeTimeoutMs = options.nodeTimeoutMs ?? 5_000;

  const servers: LocalRedis[] = [];
  const stopAll = () => Promise.all(servers.map((server) => server.stop())).then(() => undefined);
  try {
    const started = await Promise.all(Array.from({ length: masters * (1 + replicas) }, () => startNode(binary, nodeTimeoutMs, options.args ?? [])));
    servers.push(...started);
    const addresses = servers.map((server) => `127.0.0.1:${server.port}`);
    await form(cli, addresses, replicas);
    const readyTimeoutMs = options.readyTimeoutMs ?? 20_000;
    const deadline = Date.now() + readyTimeoutMs;
    await waitUntilOk(cli, servers, readyTimeoutMs);
    if (replicas > 0) {
      let replicaPorts = await replicasOf(cli, servers);
      while (replicaPorts.length !== masters * replicas) {
        if (Date.now() > deadline) throw new Error(`Expected ${masters * replicas} replicas in the Redis Cluster, found ${replicaPorts.length}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
        replicaPorts = await replicasOf(cli, servers);
      }
      await waitForReplicasInSync(cli, replicaPorts, Math.max(1_000, deadline - Date.now()));
    }
    let stopped: Promise<void> | undefined;
    return {
      url: addresses.join(','),
      nodes: servers.map((server) => ({ host: '127.0.0.1', port: server.port })),
      servers,
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

/**
 * Reads a list of cluster nodes as `REDIS_CLUSTER_NODES` holds them:
 * comma-separated `host:port`, each optionally written as a `redis://` URL.
 *
 * @throws when an entry is not `host:port`.
 * @example
 * ```ts
 * parseClusterNodes('127.0.0.1:7000, redis://10.0.0.2:7001'); // [{ host: '127.0.0.1', port: 7000 }, { host: '10.0.0.2', port: 7001 }]
 * ```
 */
export function parseClusterNodes(list: string): ClusterNode[] {
  const entries = list
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (entries.length === 0) throw new Error('Expected comma-separated host:port cluster nodes, got an empty list');
  return entries.map((entry) => {
    const match = /^(?:redis:\/\/)?(\[[^\]]+\]|[^:/]+):(\d+)\/?$/.exec(entry);
    const port = Number(match?.[2]);
    if (match === null || !(port > 0 && port < 65_536)) throw new Error(`Expected a cluster node as host:port, got "${entry}"`);
    return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
  });
}

/**
 * The definition {@link describeWithService} uses for Redis Cluster:
 * `REDIS_CLUSTER_NODES` (comma-separated `host:port` of its nodes), or a
 * 3-master cluster started by {@link startRedisCluster}. `server().url` is
 * the node list either way; read it with {@link parseClusterNodes}.
 */
export const redisClusterService: ServiceDefinition = {
  name: 'Redis Cluster',
  envVar: 'REDIS_CLUSTER_NODES',
  binary: 'redis-server',
  companions: ['redis-cli'],
  start: (binaryPath) => startRedisCluster({ binary: binaryPath }),
};

/** One cluster-enabled node; its bus port is a second free port (the default, port + 10,000, may be taken or out of range). */
async function startNode(binary: string, nodeTimeoutMs: number, args: readonly string[]): Promise<LocalRedis> {
  return onFreePort(undefined, (busPort) =>
    startRedis({
      binary,
      args: [
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        'nodes.conf',
        '--cluster-port',
        String(busPort),
        '--cluster-node-timeout',
        String(nodeTimeoutMs),
        // A replica's first sync starts at once, not after the default 5 s wait for more replicas.
        '--repl-diskless-sync-delay',
        '0',
        ...args,
      ],
    }),
  );
}

/** The ports of the nodes that are replicas, by their own `INFO replication`. */
async function replicasOf(cli: string, servers: readonly LocalRedis[]): Promise<number[]> {
  const roles = await Promise.all(servers.map(async (server) => ({ port: server.port, role: (await replicationInfo(cli, server.port)).get('role') })));
  return roles.filter((node) => node.role === 'slave').map((node) => node.port);
}

async function form(cli: string, addresses: readonly string[], replicas: number): Promise<void> {
  try {
    await run(cli, ['--cluster', 'create', ...addresses, '--cluster-replicas', String(replicas), '--cluster-yes'], { timeout: 30_000 });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`redis-cli --cluster create ${addresses.join(' ')} failed: ${(error as Error).message}\n${stdout ?? ''}${stderr ?? ''}`, { cause: error });
  }
}

async function waitUntilOk(cli: string, servers: readonly LocalRedis[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const pending = new Set(servers.map((server) => server.port));
  let last = '';
  for (;;) {
    for (const port of [...pending]) {
      const { stdout } = await run(cli, ['-h', '127.0.0.1', '-p', String(port), 'cluster', 'info'], { timeout: 5_000 });
      if (/^cluster_state:ok\r?$/m.test(stdout)) pending.delete(port);
      else last = `127.0.0.1:${port}: ${stdout.split(/\r?\n/).slice(0, 4).join(' ')}`;
    }
    if (pending.size === 0) return;
    if (Date.now() > deadline) throw new Error(`The Redis Cluster was not ok within ${timeoutMs} ms (${last})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
