import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { parseClusterNodes, redisClusterService, startRedisCluster } from './redis-cluster.js';
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
});
