import { execFile, execFileSync } from 'node:child_process';
import { accessSync, chownSync, constants, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { freezeProcesses } from './freeze.js';
import { onFreePort } from './ports.js';
import { findBinary, type RunningServer, type ServiceDefinition } from './services.js';

const run = promisify(execFile);

/** Options of {@link startPostgres}. */
export interface StartPostgresOptions {
  /** The `initdb` binary; `pg_ctl` and `postgres` are taken from the same directory. @default {@link findInitdb} */
  initdb?: string;
  /** The loopback port. @default a free port picked by the OS */
  port?: number;
  /**
   * Server settings (`-c name=value`). The defaults favour throwaway test
   * data: `fsync`, `synchronous_commit` and `full_page_writes` off, and
   * `pg_stat_statements` preloaded when the machine has it.
   */
  settings?: Readonly<Record<string, string>>;
  /** How long `pg_ctl` waits for the server to accept connections, in ms. @default 30_000 */
  readyTimeoutMs?: number;
}

/** A PostgreSQL server started by {@link startPostgres}. */
export interface LocalPostgres extends RunningServer {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`; the superuser `postgres` needs no password (trust on loopback). */
  readonly url: string;
  readonly port: number;
  /** The data directory (removed by `stop()`). */
  readonly dataDir: string;
  /** True when `pg_stat_statements` is preloaded, so `CREATE EXTENSION pg_stat_statements` works. */
  readonly statStatements: boolean;
  /** Stops the server but keeps its data, to simulate an outage. `fast` closes connections cleanly; `immediate` is a crash. */
  halt(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Starts a halted server again, on the same port and data. */
  resume(): Promise<void>;
  /** Sends SIGSTOP to the postmaster and its backends and resolves once they have stopped: connections and queries hang (a server that stopped answering). */
  freeze(): Promise<void>;
  /** Sends SIGCONT to the processes {@link LocalPostgres.freeze} stopped. */
  thaw(): void;
}

/**
 * Finds `initdb`: on PATH, in /usr/local/bin, then in the newest
 * /usr/lib/postgresql/<version>/bin (Debian's layout, where it is not on PATH).
 */
export function findInitdb(): string | undefined {
  const versions = (() => {
    try {
      return readdirSync('/usr/lib/postgresql')
        .filter((v) => /^\d+$/.test(v))
        .sort((a, b) => Number(b) - Number(a));
    } catch {
      return [];
    }
  })();
  return findBinary('initdb', ['/usr/local/bin', '/usr/lib/postgresql/bin', ...versions.map((v) => `/usr/lib/postgresql/${v}/bin`)]);
}

/**
 * Starts a private PostgreSQL on a free loopback port from the binaries on
 * the machine: `initdb` into a fresh temporary directory (trust
 * authentication, UTF8, C locale), then `pg_ctl start`. It resolves once the
 * server accepts connections. `stop()` stops it and removes the directory;
 * the server is also stopped if the test process exits first.
 *
 * `initdb` refuses to run as root: when the tests run as root, the server is
 * initialised and run as the `postgres` user (through `runuser`, or `su`),
 * in a directory owned by that user.
 *
 * @throws when the binaries are missing, or the server cannot be initialised or does not start in time (the error carries its log).
 * @example
 * ```ts
 * const pg = await startPostgres();
 * const pool = new Pool({ connectionString: pg.url });
 * // ...
 * await pool.end();
 * await pg.stop();
 * ```
 */
export async function startPostgres(options: StartPostgresOptions = {}): Promise<LocalPostgres> {
  const initdb = options.initdb ?? findInitdb();
  if (initdb === undefined) throw new Error('initdb was not found on PATH, in /usr/local/bin or in /usr/lib/postgresql/*/bin');
  const binDir = dirname(realpathSync(initdb));
  const pgCtl = [join(binDir, 'pg_ctl'), join(dirname(initdb), 'pg_ctl')].find(executable) ?? findBinary('pg_ctl');
  if (pgCtl === undefined) throw new Error(`pg_ctl was not found next to ${initdb} or on PATH`);
  const asUser = runAsPostgres();
  const root = mkdtempSync(join(tmpdir(), 'ratekit-pg-'));
  const dataDir = join(root, 'data');
  const logFile = join(root, 'server.log');
  if (asUser !== undefined) chownSync(root, asUser.uid, asUser.gid);
  const command = (binary: string, args: string[]) => (asUser === undefined ? [binary, ...args] : asUser.wrap([binary, ...args]));
  const exec = async (binary: string, args: string[], timeoutMs: number) => {
    const [file, ...rest] = command(binary, args);
    return run(file!, rest, { timeout: timeoutMs, cwd: root });
  };
  const log = () => {
    try {
      return readFileSync(logFile, 'utf8').slice(-4_000);
    } catch {
      return '';
    }
  };

  try {
    await exec(initdb, ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-sync'], 120_000);
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    throw new Error(`initdb failed: ${(error as Error).message}`, { cause: error });
  }

  const statStatements = exists(join(binDir, '..', 'lib', 'pg_stat_statements.so'));
  const settings: Record<string, string> = {
    listen_addresses: '127.0.0.1',
    unix_socket_directories: root,
    fsync: 'off',
    synchronous_commit: 'off',
    full_page_writes: 'off',
    ...(statStatements ? { shared_preload_libraries: 'pg_stat_statements' } : {}),
    ...options.settings,
  };
  const readyTimeoutMs = options.readyTimeoutMs ?? 30_000;
  let port = 0;
  const start = async () => {
    const flags = [`-p ${port}`, ...Object.entries(settings).map(([name, value]) => `-c ${name}=${value === '' ? "''" : value}`)].join(' ');
    await exec(pgCtl, ['start', '-D', dataDir, '-l', logFile, '-w', '-t', String(Math.ceil(readyTimeoutMs / 1_000)), '-o', flags], readyTimeoutMs + 5_000);
  };
  const stopServer = async (mode: 'fast' | 'immediate') => {
    await exec(pgCtl, ['stop', '-D', dataDir, '-m', mode, '-w', '-t', '30'], 35_000);
  };
  const stopOnExit = () => {
    try {
      const [file, ...rest] = command(pgCtl, ['stop', '-D', dataDir, '-m', 'immediate']);
      execFileSync(file!, rest, { stdio: 'ignore', timeout: 10_000 });
    } catch {
      // already stopped
    }
    rmSync(root, { recursive: true, force: true });
  };

  let lastError: unknown;
  try {
    await onFreePort(options.port, (picked) => {
      port = picked;
      return start();
    });
  } catch (error) {
    lastError = error;
  }
  if (lastError !== undefined) {
    const output = log();
    rmSync(root, { recursive: true, force: true });
    throw new Error(`Could not start PostgreSQL from ${binDir}: ${(lastError as Error).message}\n${output}`, { cause: lastError });
  }
  process.once('exit', stopOnExit);

  let frozen: number[] = [];
  const thaw = () => {
    for (const pid of frozen) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // exited meanwhile
      }
    }
    frozen = [];
  };
  let stopped: Promise<void> | undefined;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    dataDir,
    statStatements,
    halt: (mode = 'fast') => stopServer(mode),
    resume: start,
    freeze() {
      const postmaster = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      frozen = [postmaster, ...childrenOf(postmaster)];
      return freezeProcesses(frozen);
    },
    thaw,
    stop() {
      stopped ??= (async () => {
        thaw();
        process.removeListener('exit', stopOnExit);
        try {
          await stopServer('fast');
        } catch {
          // halted already, or never came back
        }
        rmSync(root, { recursive: true, force: true });
      })();
      return stopped;
    },
  };
}

/** The definition `describeWithService` uses for PostgreSQL: `DATABASE_URL`, or a private server started with `initdb`/`pg_ctl`. */
export const postgresService: ServiceDefinition = {
  name: 'PostgreSQL',
  envVar: 'DATABASE_URL',
  binary: findInitdb() ?? 'initdb',
  start: (initdb) => startPostgres({ initdb }),
};

/** How to run a command as the `postgres` user when we are root (initdb refuses root), or undefined when we are not root. */
function runAsPostgres(): { wrap(argv: string[]): string[]; uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  let uid: number;
  let gid: number;
  try {
    uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  } catch {
    throw new Error('Running as root, and there is no `postgres` user to run initdb as (initdb refuses to run as root)');
  }
  const runuser = findBinary('runuser', ['/usr/sbin', '/sbin', '/usr/bin']);
  if (runuser !== undefined) return { wrap: (argv) => [runuser, '-u', 'postgres', '--', ...argv], uid, gid };
  // su takes one shell command line: quote each argument for sh.
  const quote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`;
  return { wrap: (argv) => ['su', 'postgres', '-s', '/bin/sh', '-c', argv.map(quote).join(' ')], uid, gid };
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function exists(path: string): boolean {
  try {
    accessSync(path, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}

/** The pids whose parent is `pid` (Linux /proc), for freezing a server's backends with it. */
function childrenOf(pid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the parenthesised command name: state, ppid, ...
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) found.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return found;
}
