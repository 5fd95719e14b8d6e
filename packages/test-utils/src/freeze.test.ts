import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { freezeProcesses } from './freeze.js';

/** The state letter of each thread of `pid`. */
const threadStates = (pid: number) =>
  readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2];
  });

(process.platform === 'linux' ? describe : describe.skip)('freezeProcesses', () => {
  it('resolves only once every thread of the process has stopped', async () => {
    // A busy Node process (several threads, the main one spinning), once it has started them.
    const child = spawn(process.execPath, ['-e', "process.stdout.write('ready'); for (;;) {}"], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      await new Promise((resolve) => child.stdout.once('data', resolve));
      await freezeProcesses([child.pid!]);
      const states = threadStates(child.pid!);
      expect(states.length).toBeGreaterThan(1);
      expect(states.every((state) => state === 'T')).toBe(true);
      child.kill('SIGCONT');
    } finally {
      child.kill('SIGKILL');
    }
  });
});
