// The Deno KV store on Deno itself, with a local database in a temporary directory (run by the
// runtime matrix: `deno run -A --unstable-kv`). The conformance and differential suites, then what only a shared
// database shows: two connections to one file racing for the same key never over-admit, and neither do four Deno
// processes on one file (each process is this same file, started again in the contender role below).
import { createLimiter, RateKitError, RateKitOptionError } from '@ratekit/core';
import { denoKvStore, type DenoKvLike } from '@ratekit/deno-kv';
import { ask, freshNamespace, limits, testDifferential, testStore } from '@ratekit/test-utils';

declare const Deno: {
  openKv(path?: string): Promise<DenoKvLike & { close(): void }>;
  makeTempDir(options?: { prefix?: string }): Promise<string>;
  remove(path: string, options?: { recursive?: boolean }): Promise<void>;
  env: { get(name: string): string | undefined };
  execPath(): string;
  mainModule: string;
  exit(code?: number): never;
  stdin: { readable: ReadableStream<Uint8Array> };
  Command: new (
    command: string,
    options: { args: string[]; env: Record<string, string>; stdin: 'piped'; stdout: 'piped'; stderr: 'inherit' },
  ) => { spawn(): { stdin: WritableStream<Uint8Array>; stdout: ReadableStream<Uint8Array>; status: Promise<{ code: number }> } };
};

/** Set in a contender process: the database file, the namespace and the limit, as JSON. */
const CONTENDER = 'RATEKIT_DENO_KV_CONTENDER';
/** Decisions each contender process makes at once, on one key. */
const DECISIONS_PER_PROCESS = 100;

/**
 * The contender role: open the shared file, say `ready`, wait for the parent's go (a line on stdin, so all
 * processes start together), make {@link DECISIONS_PER_PROCESS} concurrent decisions on one key, and print the
 * counts as one JSON line. Runs instead of the tests when this file is started with {@link CONTENDER} set.
 */
async function contend(setting: string): Promise<void> {
  const { path, namespace, limit } = JSON.parse(setting) as { path: string; namespace: string; limit: number };
  const kv = await Deno.openKv(path);
  const store = denoKvStore({ kv, prefix: ['ratekit-processes'] });
  const policy = limits({ limit, windowMs: 3_600_000 });
  console.log('ready');
  await Deno.stdin.readable.getReader().read();
  const results = await Promise.allSettled(Array.from({ length: DECISIONS_PER_PROCESS }, () => ask(store, { namespace, limits: policy })));
  const counts = { allowed: 0, refused: 0, errors: [] as string[] };
  for (const result of results) {
    if (result.status === 'rejected') counts.errors.push(String((result.reason as Error).message));
    else if (result.value.allowed) counts.allowed++;
    else counts.refused++;
  }
  console.log(JSON.stringify(counts));
  kv.close();
}

const contenderSetting = Deno.env.get(CONTENDER);
if (contenderSetting !== undefined) {
  await contend(contenderSetting);
  Deno.exit(0);
}

/** Lines of a child's stdout, as they come. */
async function* lines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let buffered = '';
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    buffered += chunk;
    let end: number;
    while ((end = buffered.indexOf('\n')) >= 0) {
      yield buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
    }
  }
}

let directory = '';
let database: (DenoKvLike & { close(): void }) | undefined;
/** The suite's database, a file in a temporary directory. (A second connection to one SQLite file in one process meets "database is locked": stores of their own on this one stand for isolates.) */
async function connect(): Promise<DenoKvLike> {
  directory ||= await Deno.makeTempDir({ prefix: 'ratekit-deno-kv-' });
  database ??= await Deno.openKv(`${directory}/ratekit.sqlite3`);
  return database;
}

afterAll(async () => {
  database?.close();
  if (directory !== '') await Deno.remove(directory, { recursive: true });
});

testStore({
  name: 'deno-kv',
  makeStore: async () => denoKvStore({ kv: await connect(), prefix: ['ratekit-test'] }),
  additionalTests: (context) => {
    it('keeps each limit of a key in its own entry under [prefix, namespace, key, limit id]', async () => {
      const kv = await connect();
      const store = denoKvStore({ kv, prefix: ['ratekit-layout'] });
      const namespace = context.namespace();
      const policy = limits({ name: 'perSecond', limit: 2, windowMs: 1_000 }, { name: 'perHour', algorithm: 'fixed-window', limit: 100, windowMs: 3_600_000 });
      await ask(store, { namespace, limits: policy });
      const entries = await kv.getMany(policy.map((limit) => store.keyFor('client', namespace, limit.id)));
      expect(entries.map((entry) => [entry.key, Array.isArray(entry.value), entry.versionstamp !== null])).toEqual([
        [['ratekit-layout', namespace, 'client', 'fixed-window:perSecond'], true, true],
        [['ratekit-layout', namespace, 'client', 'fixed-window:perHour'], true, true],
      ]);
    });
  },
});

testDifferential({ name: 'deno-kv', makeStore: async () => denoKvStore({ kv: await connect(), prefix: ['ratekit-diff'] }) });

describe('deno-kv store: two stores (two isolates) on one database', () => {
  it('admits exactly the limit when 40 decisions on one key race from two stores', async () => {
    const [a, b] = [denoKvStore({ kv: await connect(), prefix: ['ratekit-race'] }), denoKvStore({ kv: await connect(), prefix: ['ratekit-race'] })];
    const namespace = freshNamespace('race');
    const policy = limits({ algorithm: 'gcra', limit: 7, windowMs: 60_000 });
    const decisions = await Promise.all(Array.from({ length: 40 }, (_, i) => ask(i % 2 === 0 ? a : b, { namespace, limits: policy })));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(7);
    // Both stores admitted some of them: the race was real.
    expect(new Set(decisions.map((d, i) => (d.allowed ? i % 2 : -1))).size).toBeGreaterThan(1);
  });

  it('rejects with a coded store error after maxAttempts lost races', async () => {
    const store = denoKvStore({ kv: await connect(), prefix: ['ratekit-race'], maxAttempts: 1 });
    const other = denoKvStore({ kv: await connect(), prefix: ['ratekit-race'], maxAttempts: 1 });
    const namespace = freshNamespace('lost');
    const policy = limits({ limit: 1_000, windowMs: 60_000 });
    const results = await Promise.allSettled(Array.from({ length: 30 }, (_, i) => ask(i % 2 === 0 ? store : other, { namespace, limits: policy })));
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    // Two stores' single-attempt decisions on one key, interleaved: some lose (each commit checks what it read).
    expect(lost.length).toBeGreaterThan(0);
    for (const r of lost) {
      expect(r.reason).toBeInstanceOf(RateKitError);
      expect((r.reason as RateKitError).code).toBe('ERR_RATEKIT_STORE');
      expect((r.reason as Error).message).toMatch(/lost 1 compare-and-set races/);
    }
  });
});

describe('deno-kv store: four Deno processes on one database file', () => {
  it('admits exactly the limit, and no decision fails, when each makes 100 concurrent decisions on one key', async () => {
    directory ||= await Deno.makeTempDir({ prefix: 'ratekit-deno-kv-' });
    const setting = JSON.stringify({ path: `${directory}/processes.sqlite3`, namespace: freshNamespace('processes'), limit: 100 });
    const children = Array.from({ length: 4 }, () =>
      new Deno.Command(Deno.execPath(), {
        args: ['run', '--allow-all', '--unstable-kv', '--quiet', Deno.mainModule],
        env: { [CONTENDER]: setting },
        stdin: 'piped',
        stdout: 'piped',
        stderr: 'inherit',
      }).spawn(),
    );
    const outputs = children.map((child) => lines(child.stdout));
    // Every process has opened the file before any decides.
    for (const output of outputs) expect((await output.next()).value).toBe('ready');
    await Promise.all(
      children.map(async (child) => {
        const writer = child.stdin.getWriter();
        await writer.write(new TextEncoder().encode('go\n'));
        await writer.close();
      }),
    );
    const counts = await Promise.all(outputs.map(async (output) => JSON.parse((await output.next()).value as string) as { allowed: number; refused: number; errors: string[] }));
    for (const child of children) expect((await child.status).code).toBe(0);
    expect(counts.flatMap((c) => c.errors)).toEqual([]);
    expect(counts.reduce((sum, c) => sum + c.allowed, 0)).toBe(100);
    expect(counts.reduce((sum, c) => sum + c.refused, 0)).toBe(300);
  });
});

describe('deno-kv store options', () => {
  it('refuses a sliding log too long for one Deno KV value when the limiter is built', async () => {
    const store = denoKvStore({ kv: await connect() });
    expect(() => createLimiter({ limits: [{ algorithm: 'sliding-log', limit: 10_000, windowMs: 1_000 }], store })).toThrow(RateKitOptionError);
  });
});
