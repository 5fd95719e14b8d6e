import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** A server a test can talk to: one it started itself, or one given by the environment. */
export interface RunningServer {
  /** How to reach it, e.g. `redis://127.0.0.1:6379`. */
  readonly url: string;
  /** Stops the server if the test setup started it; does nothing for a server given by the environment. */
  stop(): Promise<void>;
}

/** How to get a server for the tests: from an environment variable, or by starting one from a binary on the machine. */
export interface ServiceDefinition {
  /** For messages, e.g. `Redis`. */
  readonly name: string;
  /**
   * The environment variable that points at an existing server, e.g.
   * `REDIS_URL`. Leave it out for tests that need a server of their own
   * (they reset server-wide statistics or flush scripts), which then always
   * start one from the binary.
   */
  readonly envVar?: string;
  /** The binary the setup starts when `envVar` is unset, e.g. `redis-server`: a name looked up on `PATH` and in `fallbackDirs`, or an absolute path. */
  readonly binary: string;
  /** Directories searched after `PATH`. @default ['/usr/bin', '/usr/local/bin', '/usr/sbin'] */
  readonly fallbackDirs?: readonly string[];
  /** Other binaries `start` needs, looked up the same way (e.g. `redis-cli` to form a cluster); when one is missing, the service is missing. */
  readonly companions?: readonly string[];
  /** Starts a private server from the binary found. */
  start(binaryPath: string): Promise<RunningServer>;
}

/** Where the tests' server comes from, or why there is none. */
export type ServiceSource = { readonly kind: 'env'; readonly url: string } | { readonly kind: 'binary'; readonly path: string } | { readonly kind: 'missing'; readonly reason: string };

/** True when running in CI (the `CI` environment variable is set to anything but `0` or `false`). */
export function inCI(): boolean {
  const value = process.env.CI;
  return value !== undefined && value !== '' && value !== '0' && value.toLowerCase() !== 'false';
}

/** Finds an executable by name on `PATH`, then in `fallbackDirs`; an absolute path is checked as it is. */
export function findBinary(binary: string, fallbackDirs: readonly string[] = ['/usr/bin', '/usr/local/bin', '/usr/sbin']): string | undefined {
  const candidates = binary.includes('/') ? [binary] : [...(process.env.PATH ?? '').split(delimiter).filter(Boolean), ...fallbackDirs].map((dir) => join(dir, binary));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here; try the next one
    }
  }
  return undefined;
}

/** Decides, synchronously (at test collection time), where a service's server will come from. */
export function serviceSource(service: ServiceDefinition): ServiceSource {
  const url = service.envVar === undefined ? undefined : process.env[service.envVar];
  if (url !== undefined && url !== '') return { kind: 'env', url };
  const path = findBinary(service.binary, service.fallbackDirs);
  const missing = path === undefined ? service.binary : (service.companions ?? []).find((companion) => findBinary(companion, service.fallbackDirs) === undefined);
  if (path !== undefined && missing === undefined) return { kind: 'binary', path };
  const notFound = `\`${missing}\` was not found on PATH`;
  return { kind: 'missing', reason: service.envVar === undefined ? `${notFound} (these tests need a server of their own)` : `${service.envVar} is unset and ${notFound}` };
}

/**
 * `describe()` with a server: takes it from `service.envVar`, or else starts
 * one from the binary before the block's tests and stops it after them.
 *
 * When no server can be had:
 * - in CI (`CI` set), the block holds one failing test saying why, so CI never passes by skipping;
 * - elsewhere, the block is skipped and one line on stderr says what was skipped and why.
 *
 * A server that is found but fails to start fails the block's tests, in CI and locally.
 *
 * @param body - registers the tests; `server()` returns the running server once `beforeAll` has run.
 * @example
 * ```ts
 * describeWithService(redisService, 'redis store', (server) => {
 *   it('answers', async () => { const client = createClient({ url: server().url }); ... });
 * });
 * ```
 */
export function describeWithService(service: ServiceDefinition, title: string, body: (server: () => RunningServer) => void): void {
  const source = serviceSource(service);
  if (source.kind === 'missing') {
    if (inCI()) {
      describe(title, () => {
        it(`needs a ${service.name} server`, () => {
          throw new Error(`No ${service.name} server in CI: ${source.reason}. ${howToFix(service, 'Set')}.`);
        });
      });
      return;
    }
    process.stderr.write(`[ratekit tests] skipped "${title}": no ${service.name} server (${source.reason}); ${howToFix(service, 'set')} to run it\n`);
    describe.skip(title, () => body(() => notStarted(service)));
    return;
  }
  describe(title, () => {
    let running: RunningServer | undefined;
    beforeAll(async () => {
      running = source.kind === 'env' ? { url: source.url, stop: async () => {} } : await service.start(source.path);
    }, 30_000);
    body(() => running ?? notStarted(service));
    // Registered after the body's hooks so that it runs after them: the body's afterAll still has its server.
    afterAll(async () => {
      await running?.stop();
    }, 30_000);
  });
}

function howToFix(service: ServiceDefinition, set: 'Set' | 'set'): string {
  const install = `install \`${service.binary}\``;
  if (service.envVar !== undefined) return `${set} ${service.envVar} or ${install}`;
  return set === 'Set' ? `I${install.slice(1)}` : install;
}

function notStarted(service: ServiceDefinition): never {
  throw new Error(`The ${service.name} server is not running: call server() inside a test or a hook, not while tests are being collected`);
}
