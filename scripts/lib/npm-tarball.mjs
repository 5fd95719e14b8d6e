// A published package's tarball, fetched and unpacked for one run (never committed). Used by
// packages/fastify/upstream/run.mjs (its test suite) and scripts/type-tests.mjs (its type test).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fail } from './throwaway-redis.mjs';

/**
 * `npm pack <spec>` into `dir`, then unpacks it there: the package's files end up in `<dir>/package`.
 * Exits the process (through `fail`) when npm or tar fails.
 * @returns the path of `<dir>/package`
 */
export function unpackFromNpm(spec, dir) {
  const pack = spawnSync('npm', ['pack', spec, '--silent', '--pack-destination', dir], { encoding: 'utf8' });
  if (pack.status !== 0) fail(`npm pack ${spec} failed:\n${pack.stderr}`);
  const tarball = join(dir, pack.stdout.trim().split('\n').pop());
  const untar = spawnSync('tar', ['-xzf', tarball, '-C', dir], { encoding: 'utf8' });
  if (untar.status !== 0) fail(`tar failed:\n${untar.stderr}`);
  return join(dir, 'package');
}
