import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { redisSentinelService, startRedisSentinel } from './redis-sentinel.js';
import { replicationInfo } from './replication.js';
import { serviceSource } from './services.js';

const run = promisify(execFile);
const cli = (port: number, ...args: string[]) => run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args]).then((r) => r.stdout);

const source = serviceSource(redisSentinelService);
if (source.kind === 'missing') process.stderr.write(`[ratekit tests] skipped "startRedisSentinel": ${source.reason}\n`);
(source.kind === 'missing' ? describe.skip : describe)('startRedisSentinel', () => {
  it('starts a master, a replica in sync with it and a sentinel that knows both; killing the master promotes the replica', async () => {
    const sentinel = await startRedisSentinel({ downAfterMs: 500, failoverTimeoutMs: 2_000 });
    try {
      expect(sentinel.url).toBe(`127.0.0.1:${sentinel.sentinels[0]!.port}`);
      expect(await sentinel.masterAddress()).toEqual({ host: '127.0.0.1', port: sentinel.master.port });
      const replica = await replicationInfo('redis-cli', sentinel.replicas[0]!.port);
      expect(replica.get('role')).toBe('slave');
      expect(replica.get('master_link_status')).toBe('up');
      expect(await cli(sentinel.sentinels[0]!.port, 'sentinel', 'replicas', sentinel.masterName)).toContain(String(sentinel.replicas[0]!.port));

      process.kill(sentinel.master.pid, 'SIGKILL');
      const deadline = Date.now() + 15_000;
      while ((await sentinel.masterAddress()).port !== sentinel.replicas[0]!.port) {
        if (Date.now() > deadline) throw new Error('Sentinel did not promote the replica within 15 s');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect((await replicationInfo('redis-cli', sentinel.replicas[0]!.port)).get('role')).toBe('master');
    } finally {
      await sentinel.stop();
    }
  }, 30_000);
});
