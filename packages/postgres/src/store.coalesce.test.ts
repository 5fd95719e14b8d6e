import { RateKitOptionError } from '@ratekit/core';
import { ask, describeWithService, freshNamespace, inOnePollPhase, limits, postgresService } from '@ratekit/test-utils';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { dropSchemaSql } from './schema.js';
import { type PgQueryable, type PgQueryConfig, postgresStore } from './store.js';

/**
 * Coalescing on PostgreSQL: the decisions of one policy asked after the
 * first of an iteration of the event loop go as one statement. (That it never changes a decision is
 * checked by `testCoalescing` in store.test.ts.)
 */

describe('postgresStore coalescing options', () => {
  const pool: PgQueryable = { query: async () => ({ rows: [], rowCount: 0 }) };

  it.each([1, 0, 2.5, '10'])('refuses maxBatchSize %p with a coded option error', (maxBatchSize) => {
    expect(() => postgresStore({ pool, cleanupIntervalMs: 0, maxBatchSize: maxBatchSize as never })).toThrow(RateKitOptionError);
    expect(() => postgresStore({ pool, cleanupIntervalMs: 0, maxBatchSize: maxBatchSize as never })).toThrow(/Expected `maxBatchSize` to be an integer >= 2/);
  });

  it('refuses a coalesce that is not a boolean', () => {
    expect(() => postgresStore({ pool, cleanupIntervalMs: 0, coalesce: 1 as never })).toThrow(/Expected `coalesce` to be a boolean/);
  });

  it.each([-1, 0.5, '4'])('refuses batchesInFlight %p with a coded option error', (batchesInFlight) => {
    expect(() => postgresStore({ pool, cleanupIntervalMs: 0, batchesInFlight: batchesInFlight as never })).toThrow(/Expected `batchesInFlight` to be an integer >= 0/);
  });
});

/**
 * The tests that count statements pin the window rule (one statement per iteration and policy, and
 * `maxBatchSize`): with the default `batchesInFlight`, when a statement goes also depends on when earlier
 * ones are answered.
 */
const ONE_BATCH_PER_ITERATION = { batchesInFlight: 0 } as const;

describeWithService(postgresService, 'postgresStore coalescing against PostgreSQL', (server) => {
  const table = `ratekit_test_coalesce_${randomUUID().slice(0, 8)}`;
  let pool: pg.Pool;
  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: server().url, max: 10 });
    pool.on('error', () => {});
    await postgresStore({ pool, table, cleanupIntervalMs: 0 }).createSchema();
  });
  afterAll(async () => {
    await pool.query(dropSchemaSql({ table }));
    await pool.end();
  });

  /** The pool, recording each statement's name; `fail(config)` may throw instead of running it. */
  const recording = (fail: (config: PgQueryConfig) => Error | undefined = () => undefined) => {
    const sent: string[] = [];
    const wrapped: PgQueryable = {
      query(config) {
        sent.push(config.name?.startsWith('ratekit_evaluate_batch_') ? 'batch' : 'lone');
        const error = fail(config);
        return error === undefined ? pool.query(config) : Promise.reject(error);
      },
    };
    return { pool: wrapped, sent };
  };

  it('sends the first decision of an iteration alone, the others of one policy in one statement, decided in order', async () => {
    const { pool: p, sent } = recording();
    const store = postgresStore({ pool: p, table, cleanupIntervalMs: 0, ...ONE_BATCH_PER_ITERATION });
    const ns = freshNamespace();
    const window = limits({ limit: 3, windowMs: 60_000 });
    const bucket = limits({ algorithm: 'token-bucket', limit: 2, windowMs: 60_000 });
    const decisions = await Promise.all([
      ask(store, { namespace: ns, limits: window, key: 'b' }),
      ask(store, { namespace: ns, limits: window, key: 'b' }),
      ask(store, { namespace: ns, limits: window, key: 'a' }),
      ask(store, { namespace: ns, limits: bucket, key: 'a' }),
      ask(store, { namespace: `${ns}x`, limits: window, key: 'b' }),
      ask(store, { namespace: ns, limits: window, key: 'b', cost: 2 }),
      ask(store, { namespace: ns, limits: bucket, key: 'a', cost: 2 }),
    ]);
    expect(decisions.map((d) => [d.allowed, d.remaining])).toEqual([
      [true, 2],
      [true, 1],
      [true, 2],
      [true, 1],
      [true, 2],
      [false, 1],
      [false, 1],
    ]);
    // The first alone; then one statement per policy (the window's 4, the bucket's 2).
    expect(sent).toEqual(['lone', 'batch', 'batch']);
  });

  it('by default, a statement of 16 or more goes as soon as it holds half the decisions pending, so the pool runs several at once', async () => {
    const { pool: p, sent } = recording();
    const store = postgresStore({ pool: p, table, cleanupIntervalMs: 0 });
    const ns = freshNamespace();
    const policy = limits({ limit: 5, windowMs: 60_000 });
    // 41 asks in one synchronous run, each of its own key (no statement waits for another's key): the
    // first alone, then 16 of 16 and 16 of 32 pending before the check phase, and the last 8 at it.
    const asked = Array.from({ length: 41 }, (_, i) => ask(store, { namespace: ns, limits: policy, key: `k${i}` }));
    expect(sent).toEqual(['lone', 'batch', 'batch']);
    const decisions = await Promise.all(asked);
    expect(sent).toEqual(['lone', 'batch', 'batch', 'batch']);
    expect(decisions.map((d) => d.remaining)).toEqual(Array(41).fill(4));
  });

  it('a lone decision goes out at once; decisions asked from separate I/O callbacks of one poll phase join one statement', async () => {
    const { pool: p, sent } = recording();
    const store = postgresStore({ pool: p, table, cleanupIntervalMs: 0, ...ONE_BATCH_PER_ITERATION });
    const ns = freshNamespace();
    const policy = limits({ limit: 10, windowMs: 60_000 });
    const lone = ask(store, { namespace: ns, limits: policy, key: 'lone' });
    expect(sent).toEqual(['lone']); // sent before evaluate() returned
    expect((await lone).remaining).toBe(9);
    sent.length = 0;
    const decisions = await inOnePollPhase(5, () => ask(store, { namespace: ns, limits: policy }));
    expect(decisions.map((d) => d.remaining).sort((a, b) => b - a)).toEqual([9, 8, 7, 6, 5]);
    expect(sent).toEqual(['lone', 'batch']);
  });

  it('dispose() sends the decisions waiting for the check phase, and waits for them', async () => {
    const { pool: p, sent } = recording();
    const store = postgresStore({ pool: p, table, cleanupIntervalMs: 0, ...ONE_BATCH_PER_ITERATION });
    const ns = freshNamespace();
    const policy = limits({ limit: 10, windowMs: 60_000 });
    const settled: number[] = [];
    // Three keys: the batch waits for no earlier statement of its keys.
    const asked = ['a', 'b', 'c'].map((key) => ask(store, { namespace: ns, limits: policy, key }).then((d) => settled.push(d.remaining)));
    const disposed = store.dispose();
    expect(sent).toEqual(['lone', 'batch']);
    await disposed;
    // Every decision answered by the time dispose() resolves.
    expect(settled).toEqual([9, 9, 9]);
    await Promise.all(asked);
  });

  it('with coalesce: false, one statement per decision', async () => {
    const { pool: p, sent } = recording();
    const store = postgresStore({ pool: p, table, cleanupIntervalMs: 0, coalesce: false });
    const ns = freshNamespace();
    const policy = limits({ limit: 10, windowMs: 60_000 });
    await Promise.all([1, 2, 3, 4].map(() => ask(store, { namespace: ns, limits: policy })));
    expect(sent).toEqual(['lone', 'lone', 'lone', 'lone']);
  });

  it('sends at most maxBatchSize decisions in one statement', async () => {
    const { pool: p, sent } = recording();
    const store = postgresStore({ pool: p, table, cleanupIntervalMs: 0, ...ONE_BATCH_PER_ITERATION, maxBatchSize: 4 });
    const ns = freshNamespace();
    const policy = limits({ limit: 100, windowMs: 60_000 });
    const decisions = await Promise.all(Array.from({ length: 10 }, () => ask(store, { namespace: ns, limits: policy })));
    expect(decisions.map((d) => d.remaining)).toEqual(Array.from({ length: 10 }, (_, i) => 99 - i));
    expect(sent).toEqual(['lone', 'batch', 'batch', 'lone']);
  });

  it('when the statement fails with a PostgreSQL error (rolled back), each decision runs again alone: one that fails, fails alone', async () => {
    const ns = freshNamespace();
    const deadlock = () => Object.assign(new Error('deadlock detected'), { code: '40P01' });
    const { pool: p, sent } = recording((config) => {
      if (config.name?.startsWith('ratekit_evaluate_batch_')) return deadlock();
      // The decision of key 'bad', alone, fails too.
      if (config.values?.[1] === 'bad') return Object.assign(new Error('value out of range'), { code: '22003' });
      return undefined;
    });
    const store = postgresStore({ pool: p, table, cleanupIntervalMs: 0, ...ONE_BATCH_PER_ITERATION });
    const policy = limits({ limit: 5, windowMs: 60_000 });
    const settled = await Promise.allSettled(['good', 'good', 'bad', 'other'].map((key) => ask(store, { namespace: ns, limits: policy, key })));
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value.remaining] : []))).toEqual([4, 3, 4]);
    expect(sent).toEqual(['lone', 'batch', 'lone', 'lone', 'lone']);
  });

  it('when the statement fails otherwise (a lost connection: it may have committed), each decision fails with it, none runs again', async () => {
    const ns = freshNamespace();
    const { pool: p, sent } = recording((config) => (config.name?.startsWith('ratekit_evaluate_batch_') ? new Error('Connection terminated unexpectedly') : undefined));
    const store = postgresStore({ pool: p, table, cleanupIntervalMs: 0, ...ONE_BATCH_PER_ITERATION });
    const policy = limits({ limit: 5, windowMs: 60_000 });
    const settled = await Promise.allSettled([1, 2, 3].map(() => ask(store, { namespace: ns, limits: policy })));
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
    expect(sent).toEqual(['lone', 'batch']);
  });
});
