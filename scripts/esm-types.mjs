#!/usr/bin/env node
// Ships a package's type declarations once: rewrites its ESM type entry (dist/index.d.ts, as tsup
// writes it, the same bytes as dist/index.d.cts) as a one-line re-export of the CommonJS one.
//
//   node ../../scripts/esm-types.mjs      (run in the package, after `tsup`)
//
// dist/index.d.cts keeps every declaration and its TSDoc; dist/index.d.ts becomes
//
//   export * from './index.cjs';
//
// Why this direction (bench/notes/install-size.md): an ES module may import a CommonJS one, so under
// `moduleResolution: node16` the ESM entry can re-export the .d.cts; the reverse (a .d.cts re-exporting
// the .d.ts) is TS1479 for every CommonJS user who compiles with `skipLibCheck: false`, though attw
// reports no problem. One entry for both conditions is not an option either: attw reports it as
// "Masquerading as ESM" (or as CJS). Each condition still resolves to a type file of its own format.
//
// Only for packages whose two entries are identical and have no default export (`export *` does not
// carry `default`): the adapters whose CommonJS entry is the function itself (scripts/cjs-types.mjs)
// keep both files, as their two entries differ.
import { readFileSync, writeFileSync } from 'node:fs';

const esm = 'dist/index.d.ts';
const cjs = 'dist/index.d.cts';
const reexport = "export * from './index.cjs';\n";

const esmSource = readFileSync(esm, 'utf8');
const cjsSource = readFileSync(cjs, 'utf8');
if (esmSource === reexport) fail(`${esm} is already the re-export: run tsup first`);
if (esmSource !== cjsSource) fail(`${esm} and ${cjs} differ: this package's entries cannot share one file`);
if (/\bas default\b|^export default\b|^export\s*=/m.test(cjsSource)) fail(`${cjs} has a default export, which \`export *\` would drop`);

writeFileSync(esm, reexport);
console.log(`${esm}: re-exports ${cjs} (${cjsSource.length} characters, once)`);

function fail(message) {
  console.error(`✖ esm-types: ${message}`);
  process.exit(1);
}
