import { type ChildProcess, spawn } from 'node:child_process';
import { freezeProcesses } from './freeze.js';
import { onFreePort } from './ports.js';
import { waitForReply } from './probe.js';
import { findBinary, type RunningServer, type ServiceDefinition } from './services.js';

/** Options of {@link startMemcached}. */
export interface StartMemcachedOptions {
  /** The memcached binary. @default `memcached` on PATH, else /usr/bin/memcached */
  binary?: string;
  /** The loopback port. @default a free port picked by the OS */
  port?: number;
  /** Extra `memcached` arguments, e.g. `['-m', '16']`. */
  args?: readonly string[];
  /** How long to wait for the server to answer the meta no-op `mn`, in ms. @default 10_000 */
  readyTimeoutMs?: number;
}

/** A `memcached` started by {@link startMemcached}. */
export interface LocalMemcached extends RunningServer {
  /** `127.0.0.1:<port>`, the form `MEMCACHED_SERVERS` takes. */
  readonly url: string;
  readonly port: number;
  /** The server's process id. */
  readonly pid: number;
  /** Sends a signal to the server, e.g. `SIGCONT` to resume it. */
  signal(signal: NodeJS.Signals): void;
  /** Sends SIGSTOP and resolves once the server has stopped: it answers nothing until `signal('SIGCONT')`. */
  freeze(): Promise<void>;
}

/**
 * Starts a private `memcached` on a loopback port (TCP only: `-U 0`) and
 * resolves once it answers the meta no-op. When the tests run as root it
 * runs the server as `nobody` (memcached refuses to run as root without
 * `-u`). `stop()` terminates it; it is also killed if the test process exits
 * first. Call it again with the same `port` to restart a stopped server.
 *
 * @throws when the binary is missing, the server exits early or does not answer in time (the error carries its output).
 * @example
 * ```ts
 * const memcached = await startMemcached();
 * const store = memcachedStore({ servers: memcached.url });
 * // ...
 * await memcached.stop();
 * ```
 */
export async function startMemcached(options: StartMemcachedOptions = {}): Promise<LocalMemcached> {
  const binary = options.binary ?? findBinary('memcached') ?? '/usr/bin/memcached';
  return onFreePort(options.port, (port) => launch(binary, port, options));
}

/** The definition {@link describeWithService} uses for Memcached: `MEMCACHED_SERVERS` (comma-separated `host:port`), or a private `memcached`. */
export const memcachedService: ServiceDefinition = {
  name: 'Memcached',
  envVar: 'MEMCACHED_SERVERS',
  binary: 'memcached',
  start: (binaryPath) => startMemcached({ binary: binaryPath }),
};

async function launch(binary: string, port: number, options: StartMemcachedOptions): Promise<LocalMemcached> {
  const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const args = ['-l', '127.0.0.1', '-p', String(port), '-U', '0', ...(asRoot ? ['-u', 'nobody'] : []), ...(options.args ?? [])];
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4_000);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const spawnFailed = new Promise<never>((_, reject) => child.once('error', reject));
  const exitedEarly = exited.then((code) => {
    throw new Error(`memcached exited with code ${code} before answering`);
  });
  // Both only matter while waiting for the server; afterwards their rejections are expected and ignored.
  exitedEarly.catch(() => {});
  spawnFailed.catch(() => {});
  try {
    await Promise.race([waitForReply(port, 'mn', 'MN', options.readyTimeoutMs ?? 10_000), exitedEarly, spawnFailed]);
  } catch (error) {
    await stopChild(child, exited);
    process.removeListener('exit', killOnExit);
    throw new Error(`Could not start ${binary} ${args.join(' ')}: ${(error as Error).message}\n${output}`, { cause: error });
  }
  let stopped: Promise<void> | undefined;
  return {
    url: `127.0.0.1:${port}`,
    port,
    pid: child.pid!,
    signal(signal) {
      child.kill(signal);
    },
    freeze: () => freezeProcesses([child.pid!]),
    stop() {
      stopped ??= stopChild(child, exited).then(() => {
        process.removeListener('exit', killOnExit);
      });
      return stopped;
    },
  };
}

/** SIGTERM (after SIGCONT, in case it was frozen), then SIGKILL if the process has not exited within 5 s. */
async function stopChild(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGCONT');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}
