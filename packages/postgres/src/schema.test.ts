import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dropSchemaSql, schemaNames, schemaSql } from './schema.js';

describe('schemaNames', () => {
  describe('by default', () => {
    it('names every object after the table `ratekit`, unqualified', () => {
      expect(schemaNames()).toEqual({
        table: '"ratekit"',
        slotType: '"ratekit_slot"',
        stepType: '"ratekit_step_result"',
        evaluate: '"ratekit_evaluate_v2"',
        evaluateV1: '"ratekit_evaluate"',
        step: '"ratekit_step"',
        refund: '"ratekit_refund"',
        ttl: '"ratekit_ttl"',
        refill: '"ratekit_refill"',
        blocked: '"ratekit_blocked"',
        index: '"ratekit_expires_at_idx"',
        label: 'ratekit',
      });
    });
  });

  describe('with a table and a schema', () => {
    it('quotes and qualifies each name; the index stays unqualified (it lives in its table’s schema)', () => {
      const names = schemaNames({ table: 'Rate "Limits"', schema: 'app' });
      expect(names.table).toBe('"app"."Rate ""Limits"""');
      expect(names.evaluate).toBe('"app"."Rate ""Limits""_evaluate_v2"');
      expect(names.evaluateV1).toBe('"app"."Rate ""Limits""_evaluate"');
      expect(names.index).toBe('"Rate ""Limits""_expires_at_idx"');
    });
  });

  describe('with unusable names', () => {
    it.each([
      ['table', { table: '' }],
      ['table', { table: 'x'.repeat(49) }],
      ['table', { table: 'a\u0000' }],
      ['schema', { schema: 'x'.repeat(64) }],
      ['schema', { schema: 3 }],
    ])('rejects `%s`, naming it', (option, options) => {
      expect(() => schemaNames(options as never)).toThrow(expect.objectContaining({ code: 'ERR_RATEKIT_INVALID_OPTION', option }));
    });

    it('accepts the longest table name whose derived names all fit in 63 bytes', () => {
      expect(() => schemaNames({ table: 'x'.repeat(48) })).not.toThrow();
    });
  });
});

describe('schemaSql', () => {
  it('is what the package ships as sql/ratekit.sql (regenerate with `pnpm generate:sql`)', () => {
    expect(readFileSync(join(__dirname, '..', 'sql', 'ratekit.sql'), 'utf8')).toBe(schemaSql());
  });

  it('creates an UNLOGGED table only on request', () => {
    expect(schemaSql()).toMatch(/CREATE TABLE IF NOT EXISTS "ratekit" \(/);
    expect(schemaSql({ unlogged: true })).toMatch(/CREATE UNLOGGED TABLE IF NOT EXISTS "ratekit" \(/);
  });

  it('dollar-quotes function bodies with a tag the names do not contain', () => {
    const sql = schemaSql({ table: 'a$fn$b' });
    // The two type blocks and the five functions that name the table's objects use $fn1$ (opening and
    // closing); the refill function names none and keeps $fn$. PostgreSQL parsing it is tested in store.test.ts.
    expect(sql.split('$fn1$').length - 1).toBe(14);
    expect(sql).toMatch(/RETURNS float8\[\] LANGUAGE plpgsql VOLATILE AS \$fn1\$/);
    expect(sql).toContain('"a$fn$b_slot"');
  });

  it('serialises concurrent runs for the same table, and only for it', () => {
    const lock = (sql: string) => /pg_advisory_xact_lock\((-?\d+)\)/.exec(sql)![1];
    expect(lock(schemaSql())).toBe(lock(schemaSql({ unlogged: true })));
    expect(lock(schemaSql())).not.toBe(lock(schemaSql({ table: 'other' })));
    expect(lock(schemaSql())).not.toBe(lock(schemaSql({ schema: 'app' })));
  });
});

describe('dropSchemaSql', () => {
  it('drops every object schemaSql creates', () => {
    const names = schemaNames();
    const drop = dropSchemaSql();
    for (const name of [names.table, names.slotType, names.stepType, names.evaluate, names.evaluateV1, names.step, names.refund, names.ttl, names.refill, names.blocked]) {
      expect(drop).toContain(` ${name}`);
    }
  });
});
