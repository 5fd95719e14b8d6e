import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { onFreePort } from './ports.js';
import { waitForReply } from './probe.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findBinary, type RunningServer, type ServiceDefinition } from './services.js';

/** Options of {@link startRedis}. */
export interface StartRedisOptions {
  /** The redis-server binary. @default `redis-server` on PATH, else /usr/bin/redis-server */
  binary?: string;
  /** The loopback port. @default a free port picked by the OS */
  port?: number;
  /** Extra `redis-server` arguments, e.g. `['--cluster-enabled', 'yes']`. */
  args?: readonly string[];
  /** How long to wait for the server to answer PING, in ms. @default 10_000 */
  readyTimeoutMs?: number;
  /**
   * The text of a configuration file, written to `redis.conf` in the server's
   * directory and passed first (the arguments above override it). Sentinel
   * needs one it can rewrite: `config: 'sentinel monitor …'` with `args: ['--sentinel']`.
   */
  config?: string;
}

/** A `redis-server` started by {@link startRedis}. */
export interface LocalRedis extends RunningServer {
  readonly port: number;
  /** The server's process id. */
  readonly pid: number;
}

/**
 * Starts a private `redis-server` on a free loopback port, without
 * persistence (`--save '' --appendonly no`) and with its working directory
 * in a fresh temporary directory, and resolves once it answers `PING`.
 * `stop()` terminates it and removes the directory; the server is also
 * killed if the test process exits first.
 *
 * @throws when the binary is missing, the server exits early or does not answer in time (the error carries its output).
 * @example
 * ```ts
 * const redis = await startRedis();
 * const client = await createClient({ url: redis.url }).connect();
 * // ...
 * await redis.stop();
 * ```
 */
export async function startRedis(options: StartRedisOptions = {}): Promise<LocalRedis> {
  const binary = options.binary ?? findBinary('redis-server') ?? '/usr/bin/redis-server';
  return onFreePort(options.port, (port) => launch(binary, port, options));
}

/** The definition {@link describeWithService} uses for Redis: `REDIS_URL`, or a private `redis-server`. */
export const redisService: ServiceDefinition = {
  name: 'Redis',
  envVar: 'REDIS_URL',
  binary: 'redis-server',
  start: (binaryPath) => startRedis({ binary: binaryPath }),
};

/**
 * A `redis-server` of the tests' own, even when `REDIS_URL` is set: for tests
 * that read or reset server-wide state (`INFO commandstats`, `CONFIG
 * RESETSTAT`, `SCRIPT FLUSH`), which other tests on a shared server would disturb.
 */
export const privateRedisService: ServiceDefinition = {
  name: 'Redis',
  binary: 'redis-server',
  start: (binaryPath) => startRedis({ binary: binaryPath }),
};

async function launch(binary: string, port: number, options: StartRedisOptions): Promise<LocalRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'ratekit-redis-'));
  const config: string[] = [];
  if (options.config !== undefined) {
    config.push(join(dir, 'redis.conf'));
    writeFileSync(config[0]!, options.config);
  }
  const args = [...config, '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...(options.args ?? [])];
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

  const cleanup = () => {
    process.removeListener('exit', killOnExit);
    rmSync(dir, { recursive: true, force: true });
  };
  const exitedEarly = exited.then((code) => {
    throw new Error(`redis-server exited with code ${code} before answering`);
  });
  // Both only matter while waiting for PING; afterwards their rejections are expected and ignored.
  exitedEarly.catch(() => {});
  spawnFailed.catch(() => {});
  const waiting = new AbortController();
  const answered = waitForReply(port, 'PING', '+PONG', options.readyTimeoutMs ?? 10_000, waiting.signal);
  answered.catch(() => {}); // once the server has exited, nobody waits for this any more
  try {
    await Promise.race([answered, exitedEarly, spawnFailed]);
  } catch (error) {
    waiting.abort();
    await stopChild(child, exited);
    cleanup();
    throw new Error(`Could not start ${binary} on port ${port}: ${(error as Error).message}\n${output}`, { cause: error });
  }
  let stopped: Promise<void> | undefined;
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pid: child.pid!,
    stop() {
      stopped ??= stopChild(child, exited).then(cleanup);
      return stopped;
    },
  };
}

/** SIGTERM, then SIGKILL if the process has not exited within 5 s. */
async function stopChild(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}
