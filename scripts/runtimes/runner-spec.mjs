/* global describe, it, test, beforeAll, afterAll, beforeEach, afterEach, expect */
// A spec of the matrix's runner with known outcomes (test/runtime-runner.test.ts runs it on Node and checks them):
// hooks in jest's order, a failing beforeAll failing its block only, a timeout, .each titles, .skip, async
// matchers, a file that throws while loading. Not a runtime test: nothing here is under packages/.
import { runFiles } from './runner.mjs';
import './install-globals.mjs';

const order = [];

const files = [
  {
    name: 'hooks',
    load: async () => {
      describe('outer', () => {
        beforeAll(() => order.push('beforeAll outer'));
        beforeEach(() => order.push('beforeEach outer'));
        afterEach(() => order.push('afterEach outer'));
        afterAll(() => order.push('afterAll outer'));
        it('first', () => order.push('test first'));
        describe('inner', () => {
          beforeEach(() => order.push('beforeEach inner'));
          afterEach(() => order.push('afterEach inner'));
          test('second', async () => {
            await Promise.resolve();
            order.push('test second');
          });
        });
      });
      it('sees the hooks in jest’s order', () => {
        expect(order).toEqual([
          'beforeAll outer',
          'beforeEach outer',
          'test first',
          'afterEach outer',
          'beforeEach outer',
          'beforeEach inner',
          'test second',
          'afterEach inner',
          'afterEach outer',
          'afterAll outer',
        ]);
      });
    },
  },
  {
    name: 'outcomes',
    load: async () => {
      describe('broken setup', () => {
        beforeAll(() => {
          throw new Error('setup broke');
        });
        it('is failed by its beforeAll', () => {});
      });
      it('fails an assertion', () => expect({ a: [1, 2] }).toEqual({ a: [1, 3] }));
      it('times out', () => new Promise(() => {}), 50);
      it.each([
        [1, 2],
        [3, 4],
      ])('each %s < %s', (a, b) => expect(a).toBeLessThan(b));
      it.skip('is skipped (reason: the spec)', () => {
        throw new Error('a skipped test ran');
      });
      it('awaits .rejects', async () => {
        await expect(Promise.reject(new Error('no'))).rejects.toThrow('no');
      });
      it('fails a .resolves that does not hold', async () => {
        await expect(Promise.resolve(1)).resolves.toBe(2);
      });
    },
  },
  {
    name: 'broken file',
    load: async () => {
      throw new Error('cannot load');
    },
  },
];

await runFiles(files, 'spec');
