#!/usr/bin/env node
// Runs express-slow-down 3.1.0's own tests (test/library/*, test/integration/*), unchanged, against
// @ratekit/express's slowDown.
//
//   node packages/express/upstream/slow-down.mjs [--control] [--keep] [test-file-filter]
//
// --control runs the same files against the published express-slow-down (the devDependency, 3.1.1).
//
// express-slow-down does not publish its tests (its npm tarball holds dist/ only). Take `test/` from
// its repository at tag v3.1.0 into packages/express/.upstream/express-slow-down/ (git-ignored: never
// commit them), e.g. from a clone of github.com/express-rate-limit/express-slow-down:
//   git archive v3.1.0 test | tar -x -C packages/express/.upstream/express-slow-down
// Without them this script prints one line and exits 0, so CI without the files is not held up.
//
// 1. The test files `import slowDown from '../../source/index.js'`. A generated jest config maps that
//    one import to a module whose default export is `slowDown` from packages/express/dist/index.cjs
//    (build first): ours is a named export, as docs/migrating/express-slow-down.md says. With
//    --control it maps to express-slow-down's own dist/index.cjs. Nothing else is changed.
// 2. The rest of what they import resolves as in upstream's devDependencies: `express` is Express 4
//    (upstream pins 4.21.2; ours is the `express4` alias), supertest, @jest/globals. Two things of
//    upstream's setup are not here and are a few lines written below: `jest-expect-message`
//    (`expect(value, message)`, in upstream's setupFilesAfterEnv), and Jest 29's matcher aliases
//    (`toBeCalled`, `toThrowError`), which the files call and Jest 30 dropped.
// 3. jest runs every file in one process (-w 1), with @swc/jest as the repository's own config does.
// 4. Prints the counts and every failing test; exits 1 when a test fails that slow-down-differences.json
//    does not list, or when a listed test passes (the list must stay true). The control run only reports.
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fail } from '../../../scripts/lib/throwaway-redis.mjs';
import { reportAgainst, resolveAnywhere, runJest, shim, swcTransform } from '../../../scripts/lib/upstream-jest.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const packageDir = dirname(here);
const repoDir = dirname(dirname(packageDir));
const upstreamDir = join(packageDir, '.upstream', 'express-slow-down');
const testDir = join(upstreamDir, 'test');
const work = join(upstreamDir, '.run');
const args = process.argv.slice(2);
const control = args.includes('--control');
const keep = args.includes('--keep');
const filter = args.find((a) => !a.startsWith('--'));
const requireFromPackage = createRequire(join(packageDir, 'package.json'));

const SUITES = ['library', 'integration'];
if (!SUITES.every((suite) => existsSync(join(testDir, suite))) || !existsSync(join(testDir, 'helpers'))) {
  console.log(`- express-slow-down's own tests: skipped (not fetched; put test/ of its tag v3.1.0 in ${upstreamDir})`);
  process.exit(0);
}

const upstreamVersion = JSON.parse(readFileSync(join(packageDir, 'node_modules', 'express-slow-down', 'package.json'), 'utf8')).version;
const subject = control ? `express-slow-down ${upstreamVersion}` : '@ratekit/express slowDown (dist/index.cjs)';
const differences = JSON.parse(readFileSync(join(here, 'slow-down-differences.json'), 'utf8'));

/**
 * What `import 'jest-expect-message'` does: `expect(value, message)` checks as `expect(value)`, and a
 * failure's message starts with `message`. (Jest's own `expect` throws on a second argument.)
 */
const EXPECT_MESSAGE = `
const original = global.expect;
if (original.withMessage === undefined) {
const withMessage = (target, message) =>
  new Proxy(target, {
    get(object, property) {
      const value = Reflect.get(object, property);
      if (typeof value === 'function') {
        return (...args) => {
          try {
            const result = value.apply(object, args);
            return result && typeof result.then === 'function' ? result.catch((error) => { throw prefixed(error, message); }) : result;
          } catch (error) {
            throw prefixed(error, message);
          }
        };
      }
      return value !== null && typeof value === 'object' ? withMessage(value, message) : value;
    },
  });
const prefixed = (error, message) => {
  if (error instanceof Error) error.message = \`Custom message:\\n  \${message}\\n\\n\${error.message}\`;
  return error;
};
const expectWithMessage = (actual, message) => (message === undefined ? original(actual) : withMessage(original(actual), message));
Object.assign(expectWithMessage, original, { withMessage: true });
global.expect = expectWithMessage;
}
`;

/**
 * The matcher names Jest 29 (upstream's, 29.7.0) had and Jest 30 (ours) dropped, each as the matcher it
 * was an alias of: the files call `toBeCalled`, `toThrowError`.
 */
const JEST_29_ALIASES = `
const aliases = {
  toBeCalled: 'toHaveBeenCalled', toBeCalledTimes: 'toHaveBeenCalledTimes', toBeCalledWith: 'toHaveBeenCalledWith',
  lastCalledWith: 'toHaveBeenLastCalledWith', nthCalledWith: 'toHaveBeenNthCalledWith', toReturn: 'toHaveReturned',
  toReturnTimes: 'toHaveReturnedTimes', toReturnWith: 'toHaveReturnedWith', lastReturnedWith: 'toHaveLastReturnedWith',
  nthReturnedWith: 'toHaveNthReturnedWith', toThrowError: 'toThrow',
};
expect.extend(Object.fromEntries(Object.entries(aliases).map(([alias, name]) => [alias, function (received, ...args) {
  try {
    (this.isNot ? expect(received).not : expect(received))[name](...args);
    return { pass: !this.isNot, message: () => '' };
  } catch (error) {
    return { pass: this.isNot, message: () => error.message };
  }
}])));
`;
rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });

const config = {
  rootDir: upstreamDir,
  roots: [testDir],
  // Upstream's own testMatch.
  testMatch: ['**/test/{library,integration}/*-test.[jt]s?(x)'],
  testEnvironment: 'node',
  testTimeout: 30_000,
  // Upstream's setupFilesAfterEnv is ['jest-expect-message'].
  setupFilesAfterEnv: [shim(work, 'jest-29-aliases.cjs', JEST_29_ALIASES), shim(work, 'jest-expect-message.cjs', EXPECT_MESSAGE)],
  transform: swcTransform(repoDir),
  moduleNameMapper: {
    '^\\.\\./\\.\\./source/index(\\.js)?$': control ? requireFromPackage.resolve('express-slow-down') : ourSlowDown(),
    '^express$': requireFromPackage.resolve('express4'),
    '^supertest$': resolveAnywhere('supertest', packageDir, repoDir),
    '^@jest/globals$': resolveAnywhere('@jest/globals', packageDir, repoDir),
    '^jest-expect-message$': join(work, 'jest-expect-message.cjs'),
    '^@ratekit/([a-z-]+)$': join(repoDir, 'packages', '$1', 'dist', 'index.cjs'),
    // Upstream's own mapping: the files import siblings as `./x.js`.
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  modulePaths: [join(packageDir, 'node_modules'), join(repoDir, 'node_modules')],
};

const results = runJest({ repoDir, work, config, testRoot: testDir, filter, keep });
reportAgainst({
  title: `express-slow-down 3.1.0's own tests (test/library, test/integration) against ${subject}`,
  results,
  differences,
  control,
  filtered: filter !== undefined,
  documentedIn: 'upstream/slow-down-differences.json, docs/migrating/express-slow-down.md',
});

/** `slowDown` from our build, as the default export the test files import. */
function ourSlowDown() {
  const dist = join(packageDir, 'dist', 'index.cjs');
  if (!existsSync(dist)) fail('packages/express/dist/index.cjs is missing: build first (pnpm --filter @ratekit/express build)');
  if (typeof createRequire(import.meta.url)(dist).slowDown !== 'function') fail("require('@ratekit/express').slowDown is not a function");
  return shim(work, 'slow-down.cjs', `const { slowDown } = require(${JSON.stringify(dist)});\nmodule.exports = { __esModule: true, default: slowDown, slowDown };\n`);
}
