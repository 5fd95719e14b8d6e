import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** `INFO replication` of the server on 127.0.0.1:`port`, as field → value. */
export async function replicationInfo(cli: string, port: number): Promise<Map<string, string>> {
  const { stdout } = await run(cli, ['-h', '127.0.0.1', '-p', String(port), 'info', 'replication'], { timeout: 5_000 });
  const fields = new Map<string, string>();
  for (const line of stdout.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1));
  }
  return fields;
}

/**
 * Resolves once every replica in `replicaPorts` is in sync with its master:
 * `role:slave`, `master_link_status:up`, no sync in progress, and its
 * replication offset at least the master's as read in the same round. A
 * replica that never synced has nothing to fail over with (Cluster and
 * Sentinel refuse to promote it, or promote an empty one), so failover
 * tests wait for this before they kill a master.
 *
 * @throws when a replica is not in sync within `timeoutMs` (the error says which and what it reported).
 */
export async function waitForReplicasInSync(cli: string, replicaPorts: readonly number[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const pending = new Set(replicaPorts);
  let last = '';
  for (;;) {
    for (const port of [...pending]) {
      const replica = await replicationInfo(cli, port);
      const masterPort = Number(replica.get('master_port'));
      if (replica.get('role') !== 'slave' || replica.get('master_link_status') !== 'up' || replica.get('master_sync_in_progress') !== '0' || !(masterPort > 0)) {
        last = `127.0.0.1:${port}: role ${replica.get('role')}, link ${replica.get('master_link_status')}, sync in progress ${replica.get('master_sync_in_progress')}`;
        continue;
      }
      const masterOffset = Number((await replicationInfo(cli, masterPort)).get('master_repl_offset'));
      const offset = Number((await replicationInfo(cli, port)).get('slave_repl_offset'));
      if (offset >= masterOffset) pending.delete(port);
      else last = `127.0.0.1:${port}: offset ${offset} behind its master's ${masterOffset}`;
    }
    if (pending.size === 0) return;
    if (Date.now() > deadline) throw new Error(`Replicas not in sync within ${timeoutMs} ms (${last})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
