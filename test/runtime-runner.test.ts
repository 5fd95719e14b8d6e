import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

/**
 * The runtime matrix (scripts/runtimes) trusts its own small runner on Bun, Deno and workerd. Its spec
 * (scripts/runtimes/runner-spec.mjs) has known outcomes; run on Node, the runner must report exactly them,
 * failures included: a runner that passed everything would make the matrix a check that cannot fail.
 */
const MARKER = '@@ratekit-runtime-result ';

interface Result {
  passed: number;
  failed: number;
  skipped: number;
  failures: Array<{ title: string; message: string }>;
}

function runSpec(): Result {
  const child = spawnSync(process.execPath, [resolve(__dirname, '../scripts/runtimes/runner-spec.mjs')], { encoding: 'utf8', timeout: 60_000 });
  const line = child.stdout.split('\n').find((l) => l.startsWith(MARKER));
  if (line === undefined) throw new Error(`the spec printed no result (exit ${child.status}): ${child.stderr}`);
  return JSON.parse(line.slice(MARKER.length)) as Result;
}

describe('the runtime matrix’s runner', () => {
  let result: Result;
  beforeAll(() => {
    result = runSpec();
  });

  it('counts what passed, failed and was skipped', () => {
    expect([result.passed, result.failed, result.skipped]).toEqual([6, 5, 1]);
  });

  it('reports each failure with its full title and why', () => {
    expect(result.failures.map((f) => [f.title, f.message.split('\n')[0]])).toEqual([
      ['outcomes › broken setup › is failed by its beforeAll', 'beforeAll failed: Error: setup broke'],
      ['outcomes › fails an assertion', 'AssertionError: expected { a: [ 1, 2 ] } to deeply equal { a: [ 1, 3 ] }'],
      ['outcomes › times out', 'Error: outcomes › times out timed out after 50 ms'],
      ['outcomes › fails a .resolves that does not hold', 'AssertionError: expected 1 to be 2 // Object.is equality'],
      ['broken file (loading the file)', 'Error: cannot load'],
    ]);
  });
});
