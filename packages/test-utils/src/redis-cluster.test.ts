import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { parseClusterNodes, redisClusterService, startRedisCluster } from './redis-cluster.js';
import { replicationInfo } from './replication.js';
import { serviceSource } from './services.js';

const run = promisify(execFile);

describe('parseClusterNodes', () => {
  it('reads comma-separated host:port entries, with or without redis://, trimming spaces', () => {
    expect(parseClusterNodes('127.0.0.1:7000, redis://10.0.0.2:7001 ,[::1]:7002')).toEqual([
      { host: '127.0.0.1', port: 7000 },
      { host: '10.0.0.2', port: 7001 },
      { host: '::1', port: 7002 },
    ]);
  });

  it.each(['', ' , ', 'localhost', 'localhost:0', 'localhost:70000', 'a:1,b'])('refuses %p', (list) => {
    expect(() => parseClusterNodes(list)).toThrow(/Expected/);
  });
});

// The same condition describeWithService uses, minus REDIS_CLUSTER_NODES: this test starts its own cluster.
const source = serviceSource({ ...redisClusterService, envVar: undefined });
if (source.kind === 'missing') process.stderr.write(`[ratekit tests] skipped "startRedisCluster": ${source.reason}\n`);
(source.kind === 'missing' ? describe.skip : describe)('startRedisCluster', () => {
  describe('with the defaults', () => {
    it('starts 3 masters on loopback that share all 16,384 slots and agree the cluster is ok, and stops them', async () => {
      const cluster = await startRedisCluster();
      const cli = (port: number, ...args: string[]) => run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args]).then((r) => r.stdout);
      try {
        expect(cluster.nodes).toHaveLength(3);
        expect(cluster.url).toBe(cluster.nodes.map((n) => `${n.host}:${n.port}`).join(','));
        expect(parseClusterNodes(cluster.url)).toEqual(cluster.nodes);
        for (const node of cluster.nodes) {
          const info = await cli(node.port, 'cluster', 'info');
          expect(info).toMatch(/^cluster_state:ok\r?$/m);
          expect(info).toMatch(/^cluster_slots_assigned:16384\r?$/m);
          expect(info).toMatch(/^cluster_known_nodes:3\r?$/m);
          expect(await cli(node.port, 'config', 'get', 'save')).toBe('save\n\n');
        }
        const masters = (await cli(cluster.nodes[0]!.port, 'cluster', 'nodes')).split('\n').filter((line) => / (myself,)?master /.test(line));
        expect(masters).toHaveLength(3);
      } finally {
        await cluster.stop();
      }
      for (const server of cluster.servers) {
        await expect(run('redis-cli', ['-h', '127.0.0.1', '-p', String(server.port), 'ping'])).rejects.toThrow();
        expect(existsSync(`/proc/${server.pid}`)).toBe(false);
      }
    }, 30_000);
  });

  describe('with replicas', () => {
    it('starts 3 masters and 3 replicas, each replica in sync with its master when it resolves, with the node timeout given', async () => {
      const cluster = await startRedisCluster({ replicas: 1, nodeTimeoutMs: 1_000 });
      try {
        expect(cluster.servers).toHaveLength(6);
        const infos = await Promise.all(cluster.servers.map((s) => replicationInfo('redis-cli', s.port)));
        const replicas = infos.filter((info) => info.get('role') === 'slave');
        expect(replicas).toHaveLength(3);
        expect(new Set(replicas.map((r) => r.get('master_port'))).size).toBe(3);
        for (const replica of replicas) {
          expect(replica.get('master_link_status')).toBe('up');
          const master = infos[cluster.servers.findIndex((s) => String(s.port) === replica.get('master_port'))]!;
          expect(Number(replica.get('slave_repl_offset'))).toBeGreaterThanOrEqual(Number(master.get('master_repl_offset')));
        }
        const { stdout } = await run('redis-cli', ['-p', String(cluster.nodes[0]!.port), 'config', 'get', 'cluster-node-timeout']);
        expect(stdout.trim().split('\n')[1]).toBe('1000');
      } finally {
        await cluster.stop();
      }
    }, 30_000);
  });
});
