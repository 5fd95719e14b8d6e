#!/usr/bin/env node
// Rewrites an adapter's CommonJS type entry (dist/index.d.cts, as tsup bundles it) to say what the
// CommonJS build exports: the middleware or plugin function itself, carrying every named export.
//
//   node ../../scripts/cjs-types.mjs <function-name>      (run in the package, after `tsup`)
//
// tsup's footer makes `module.exports` the function (`Object.assign(fn, module.exports)`), as the
// incumbents do, but its .d.cts speaks ES exports (`export { fn as default, fn, … }`), so
// `import fn = require('@ratekit/koa')` gives a namespace that is not callable (TS2349). This turns
// the bundle's export lists into a namespace merged with the function, and `export = fn`, the shape
// of @fastify/rate-limit's and @types/koa-ratelimit's declarations:
//
//   declare function fn(…): …;            // the bundle, unchanged
//   declare namespace fn { export { fn as default, fn, Options, … }; }
//   export = fn;
//
// The ESM entry (dist/index.d.ts) is left as tsup wrote it.
import { readFileSync, writeFileSync } from 'node:fs';

const [name] = process.argv.slice(2);
const file = 'dist/index.d.cts';
if (name === undefined || !/^[A-Za-z_$][\w$]*$/.test(name)) fail('usage: cjs-types.mjs <exported function name>');

const source = readFileSync(file, 'utf8');
if (/^export\s*=/m.test(source)) fail(`${file} already has \`export =\`: run tsup first`);

const imported = new Set();
for (const [, list] of source.matchAll(/^import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+'[^']+';$/gm)) {
  for (const spec of splitList(list)) imported.add(localName(spec));
}

const exported = [];
let sawFinalList = false;
const lines = source.split('\n').map((line) => {
  // `export { a, type B } from 'm';` → import what is not imported yet, and export it from the namespace.
  const reexport = /^export\s+(type\s+)?\{([^}]*)\}\s+from\s+('[^']+');$/.exec(line);
  if (reexport !== null) {
    const specs = splitList(reexport[2]).map((spec) => (reexport[1] === undefined ? spec : `type ${spec}`));
    exported.push(...specs.map(exportedAsLocal));
    const missing = specs.filter((spec) => !imported.has(exportedName(spec)));
    for (const spec of missing) imported.add(exportedName(spec));
    return missing.length === 0 ? '' : `import { ${missing.join(', ')} } from ${reexport[3]};`;
  }
  const list = /^export\s+\{([^}]*)\};$/.exec(line);
  if (list !== null) {
    sawFinalList = true;
    exported.push(...splitList(list[1]));
    return '';
  }
  if (/^export\s/.test(line)) fail(`${file}: an export this script does not rewrite: ${line}`);
  return line;
});
if (!sawFinalList) fail(`${file}: no \`export { … };\` list found (has tsup's output changed?)`);
if (!exported.some((spec) => localName(spec) === name)) fail(`${file}: ${name} is not exported`);

// A namespace with values merges with a function, not with a `const`: `declare const fn: T;` (a plugin
// built by fastify-plugin) becomes the function T describes, as @fastify/rate-limit declares its own.
const asConst = new RegExp(`^declare const ${name.replace(/\$/g, '\\$')}: (.+);$`);
const at = lines.findIndex((line) => asConst.test(line));
if (at !== -1) {
  const type = asConst.exec(lines[at])[1];
  lines[at] = `declare function ${name}(...params: Parameters<${type}>): ReturnType<${type}>;`;
}

const namespace = [`declare namespace ${name} {`, `    export { ${exported.join(', ')} };`, '}', `export = ${name};`, ''];
writeFileSync(file, `${lines.join('\n').replace(/\n+$/, '\n')}\n${namespace.join('\n')}`);
console.log(`${file}: export = ${name}, with ${exported.length} named exports in its namespace`);

function splitList(list) {
  return list
    .split(',')
    .map((spec) => spec.trim().replace(/\s+/g, ' '))
    .filter((spec) => spec !== '');
}

/** `type A as B` → `A`: the name the specifier reads in this file. */
function localName(spec) {
  return spec.replace(/^type /, '').split(' as ')[0];
}

/** `type A as B` → `B`: the name the specifier gives. */
function exportedName(spec) {
  const parts = spec.replace(/^type /, '').split(' as ');
  return parts[parts.length - 1];
}

/** A re-export's specifier as the namespace exports it: under the name it was imported as. */
function exportedAsLocal(spec) {
  const typeOnly = spec.startsWith('type ');
  return `${typeOnly ? 'type ' : ''}${exportedName(spec)}`;
}

function fail(message) {
  console.error(`✖ cjs-types: ${message}`);
  process.exit(1);
}
