#!/usr/bin/env node
// Writes the package's ESM entry as a thin wrapper over its one CommonJS bundle, after tsup (`pnpm build` runs it):
//
//   dist/index.js    import bundle from './index.cjs'; export const { RateLimiterMemory, … } = bundle;
//   dist/index.d.ts  export * from './index.cjs';
//
// Why: rate-limiter-flexible ships CommonJS only, so `require('rate-limiter-flexible')` and
// `import … from 'rate-limiter-flexible'` give the same classes. Two bundles, one per format, would give each
// class twice (the dual-package hazard): a `RateLimiterRes` rejected by a limiter a dependency `require`d would not
// be `instanceof` the `RateLimiterRes` an ES module imported. With one bundle, every entry (root and deep paths,
// `import` and `require`) reaches the same class objects. Named exports are listed from the bundle itself, so the
// ESM entry exports exactly what the CommonJS one does.
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const dist = join(dirname(dirname(fileURLToPath(import.meta.url))), 'dist');
const names = Object.keys(createRequire(join(dist, 'index.cjs'))('./index.cjs'))
  .filter((name) => name !== 'default' && name !== '__esModule')
  .sort();
if (names.length === 0) {
  console.error('✖ esm-entry: dist/index.cjs exports nothing (run tsup first)');
  process.exit(1);
}
const header = '// The ESM entry: the CommonJS bundle, re-exported, so that import and require give the same classes.\n';
writeFileSync(join(dist, 'index.js'), `${header}import bundle from './index.cjs';\n\nexport const {\n${names.map((name) => `  ${name},`).join('\n')}\n} = bundle;\n`);
writeFileSync(join(dist, 'index.d.ts'), "export * from './index.cjs';\n");
console.log(`dist/index.js: ${names.length} names re-exported from dist/index.cjs`);
