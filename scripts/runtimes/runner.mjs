// The test runner the runtime matrix bundles into each runtime's tests (Bun, Deno, workerd).
//
// Rule: it gives the test files the globals of jest that runtime tests may use (describe, it/test,
// the four hooks, .each over an array, .skip) and jest's `expect` as @vitest/expect implements it, and nothing
// else, so a file that passes here also runs unchanged under jest on Node. It uses only what every runtime has
// (promises, setTimeout, console): no Node API, no module-scope work beyond defining functions.
//
// Semantics follow jest where a test could tell the difference: hooks run in declaration order, beforeAll/afterAll
// once per describe, beforeEach/afterEach from the outermost describe in; a failing beforeAll fails every test of
// its describe; afterAll always runs; each test and hook has a timeout (60 s unless given, as jest.config.js sets).
import { chai, GLOBAL_EXPECT, getState, JestAsymmetricMatchers, JestChaiExpect, JestExtend, setState } from '@vitest/expect';

const DEFAULT_TIMEOUT_MS = 60_000;

/** One describe block: its hooks and children (tests and blocks), in declaration order. */
function block(name, parent, skip = false) {
  return { name, parent, skip: skip || (parent?.skip ?? false), children: [], beforeAll: [], afterAll: [], beforeEach: [], afterEach: [] };
}

let root = block('', undefined);
let current = root;

/** jest-each's title placeholders: %s %d %i %f %j %o %O %p %#, %% for a percent sign. */
function formatTitle(title, args, index) {
  let next = 0;
  return title.replace(/%([sdifjoOp#%])/g, (match, kind) => {
    if (kind === '%') return '%';
    if (kind === '#') return String(index);
    if (next >= args.length) return match;
    const value = args[next++];
    switch (kind) {
      case 's':
        return typeof value === 'string' ? value : stringify(value);
      case 'd':
      case 'i':
        return String(kind === 'i' ? Math.trunc(Number(value)) : Number(value));
      case 'f':
        return String(Number(value));
      default:
        return stringify(value);
    }
  });
}

function stringify(value) {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean' || value == null) return String(value);
  if (typeof value === 'function') return `[Function ${value.name || 'anonymous'}]`;
  if (value instanceof RegExp || value instanceof Error) return String(value);
  try {
    return JSON.stringify(value, (_, v) => (v === Infinity ? 'Infinity' : typeof v === 'bigint' ? `${v}n` : v));
  } catch {
    return String(value);
  }
}

/** `.each(table)(title, fn, timeout)`: one call of `register` per row; a row that is an array is spread, as jest does. */
function eachOf(register) {
  return (table) => {
    if (!Array.isArray(table)) throw new TypeError('.each: only an array table is supported by the runtime matrix (no tagged templates)');
    return (title, fn, timeoutMs) =>
      table.forEach((row, index) => {
        const args = Array.isArray(row) ? row : [row];
        register(formatTitle(title, args, index), () => fn(...args), timeoutMs);
      });
  };
}

function addTest(name, fn, timeoutMs, skip = false) {
  if (typeof fn !== 'function') throw new TypeError(`test "${name}": the runtime matrix supports only a function body`);
  if (fn.length > 0) {
    // A `done` callback: unsupported (jest-compatible async functions only).
    throw new TypeError(`test "${name}": done callbacks are not supported; return a promise`);
  }
  current.children.push({ kind: 'test', name, fn, timeoutMs: timeoutMs ?? DEFAULT_TIMEOUT_MS, skip: skip || current.skip });
}

function addDescribe(name, body, skip = false) {
  const child = block(name, current, skip);
  current.children.push({ kind: 'block', block: child });
  const parent = current;
  current = child;
  try {
    const result = body();
    if (result && typeof result.then === 'function') throw new TypeError(`describe "${name}": a describe body must not be async (register tests synchronously)`);
  } finally {
    current = parent;
  }
}

function hook(kind) {
  return (fn, timeoutMs) => current[kind].push({ fn, timeoutMs: timeoutMs ?? DEFAULT_TIMEOUT_MS });
}

function makeIt() {
  const it = (name, fn, timeoutMs) => addTest(name, fn, timeoutMs);
  it.skip = (name, fn, timeoutMs) => addTest(name, fn ?? (() => {}), timeoutMs, true);
  it.each = eachOf((name, fn, timeoutMs) => addTest(name, fn, timeoutMs));
  it.skip.each = eachOf((name, fn, timeoutMs) => addTest(name, fn, timeoutMs, true));
  it.only = () => {
    throw new Error('.only is not allowed in committed tests');
  };
  it.todo = (name) => addTest(`${name} (todo)`, () => {}, undefined, true);
  return it;
}

function makeDescribe() {
  const describe = (name, body) => addDescribe(name, body);
  describe.skip = (name, body) => addDescribe(name, body, true);
  describe.each = eachOf((name, body) => addDescribe(name, body));
  describe.only = () => {
    throw new Error('.only is not allowed in committed tests');
  };
  return describe;
}

/** jest's `expect`, from @vitest/expect over chai, with the assertion count it keeps. */
function makeExpect() {
  chai.use(JestExtend);
  chai.use(JestChaiExpect);
  chai.use(JestAsymmetricMatchers);
  const expect = (value, message) => {
    const { assertionCalls } = getState(expect);
    setState({ assertionCalls: assertionCalls + 1 }, expect);
    return chai.expect(value, message);
  };
  Object.assign(expect, chai.expect);
  expect.getState = () => getState(expect);
  expect.setState = (state) => setState(state, expect);
  globalThis[GLOBAL_EXPECT] = expect;
  setState({ assertionCalls: 0, isExpectingAssertions: false, expectedAssertionsNumber: null }, expect);
  return expect;
}

/** Puts describe/it/test/hooks/expect on globalThis, as jest does. */
export function installGlobals() {
  const it = makeIt();
  Object.assign(globalThis, {
    describe: makeDescribe(),
    it,
    test: it,
    beforeAll: hook('beforeAll'),
    afterAll: hook('afterAll'),
    beforeEach: hook('beforeEach'),
    afterEach: hook('afterEach'),
    expect: makeExpect(),
  });
}

/** Runs `fn` with a timeout; the timer is cleared either way (no timer outlives the test). */
async function withTimeout(label, fn, timeoutMs) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${label} timed out after ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([Promise.resolve().then(fn), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function describeError(error) {
  if (!(error instanceof Error)) return `thrown: ${stringify(error)}`;
  let text = `${error.name}: ${error.message}`;
  if ('actual' in error && 'expected' in error && error.showDiff !== false) {
    text += `\n      expected: ${stringify(error.expected)}\n      received: ${stringify(error.actual)}`;
  }
  const frames = (error.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line) && !/runner\.mjs|node_modules|@vitest|chai/.test(line));
  if (frames.length > 0) text += `\n${frames.slice(0, 3).join('\n')}`;
  return text;
}

async function runHooks(hooks, label) {
  for (const { fn, timeoutMs } of hooks) await withTimeout(label, fn, timeoutMs);
}

/** Runs one block; `outerEach` are the beforeEach/afterEach lists of the enclosing blocks. */
async function runBlock(node, path, outer, report) {
  const beforeEach = [...outer.beforeEach, ...node.beforeEach];
  const afterEach = [...node.afterEach, ...outer.afterEach];
  const tests = countTests(node);
  const runnable = tests.total - tests.skipped;
  let setupError;
  if (runnable > 0) {
    try {
      await runHooks(node.beforeAll, `beforeAll of ${path.join(' › ') || 'the file'}`);
    } catch (error) {
      setupError = error;
    }
  }
  for (const child of node.children) {
    if (child.kind === 'block') {
      if (setupError) failAll(child.block, [...path, child.block.name], setupError, report);
      else await runBlock(child.block, [...path, child.block.name], { beforeEach, afterEach }, report);
      continue;
    }
    const title = [...path, child.name].join(' › ');
    if (child.skip) {
      report.skipped.push(title);
      continue;
    }
    if (setupError) {
      report.failures.push({ title, message: `beforeAll failed: ${describeError(setupError)}` });
      continue;
    }
    let failure;
    try {
      await runHooks(beforeEach, `beforeEach of ${title}`);
      await withTimeout(title, child.fn, child.timeoutMs);
    } catch (error) {
      failure = error;
    }
    try {
      await runHooks(afterEach, `afterEach of ${title}`);
    } catch (error) {
      failure ??= error;
    }
    if (failure === undefined) report.passed.push(title);
    else report.failures.push({ title, message: describeError(failure) });
  }
  if (runnable > 0) {
    try {
      await runHooks(node.afterAll, `afterAll of ${path.join(' › ') || 'the file'}`);
    } catch (error) {
      report.failures.push({ title: `${path.join(' › ')} (afterAll)`, message: describeError(error) });
    }
  }
}

function countTests(node) {
  let total = 0;
  let skipped = 0;
  for (const child of node.children) {
    if (child.kind === 'block') {
      const inner = countTests(child.block);
      total += inner.total;
      skipped += inner.skipped;
    } else {
      total += 1;
      if (child.skip) skipped += 1;
    }
  }
  return { total, skipped };
}

function failAll(node, path, error, report) {
  for (const child of node.children) {
    if (child.kind === 'block') failAll(child.block, [...path, child.block.name], error, report);
    else if (child.skip) report.skipped.push([...path, child.name].join(' › '));
    else report.failures.push({ title: [...path, child.name].join(' › '), message: `beforeAll failed: ${describeError(error)}` });
  }
}

/** The line the harness reads a runtime's results from (the rest of the output is for people). */
export const RESULT_MARKER = '@@ratekit-runtime-result ';

/**
 * Loads each test file (its registrations), then runs its tests; a file that throws while loading fails as one
 * test named after it. Prints the marker line at the end (the harness prints the failures).
 * @param {Array<{ name: string, load: () => Promise<unknown> }>} files
 * @param {string} label - the runtime, for the output
 */
export async function runFiles(files, label) {
  const report = { passed: [], failures: [], skipped: [] };
  const started = Date.now();
  for (const file of files) {
    // A file imported statically (workerd-only: its Durable Object classes are the Worker's exports) registered
    // its tests into the first root when the bundle loaded; the others register now.
    if (!file.registered) root = block('', undefined);
    current = root;
    try {
      if (!file.registered) await file.load();
    } catch (error) {
      report.failures.push({ title: `${file.name} (loading the file)`, message: describeError(error) });
      continue;
    } finally {
      current = root;
    }
    if (countTests(root).total === 0) report.failures.push({ title: file.name, message: 'the file registers no test' });
    else await runBlock(root, [file.name], { beforeEach: [], afterEach: [] }, report);
  }
  const result = { label, passed: report.passed.length, failed: report.failures.length, skipped: report.skipped.length, failures: report.failures, durationMs: Date.now() - started };
  console.log(RESULT_MARKER + JSON.stringify(result));
  return result;
}
