#!/usr/bin/env node
// Checks the built package (`pnpm check:package` runs it after the build): every entry, `import` and `require`, root
// and rate-limiter-flexible's deep paths, gives the same class objects, as rlf (CommonJS only) does. With two bundles,
// `require('@ratekit/flexible').RateLimiterRes` would not be the `RateLimiterRes` an ES module imports, and a refusal
// from a limiter a dependency built would fail the app's `instanceof` (issue 38 §4: the dual-package hazard).
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { PATHS } from './deep-paths.mjs';

const require = createRequire(import.meta.url);
const imported = await import('@ratekit/flexible');
const required = require('@ratekit/flexible');

let checked = 0;
for (const name of Object.keys(required)) {
  assert.equal(imported[name], required[name], `import and require give two different ${name}`);
  checked++;
}
for (const [path, exported] of Object.entries(PATHS)) {
  const names = typeof exported === 'string' ? [exported] : exported;
  const deepRequired = require(`@ratekit/flexible/lib/${path}`);
  const deepImported = await import(`@ratekit/flexible/lib/${path}.js`);
  for (const name of names) {
    const fromRequire = typeof exported === 'string' ? deepRequired : deepRequired[name];
    const fromImport = typeof exported === 'string' ? deepImported.default : deepImported[name];
    assert.equal(fromRequire, required[name], `require('@ratekit/flexible/lib/${path}') gives another ${name}`);
    assert.equal(fromImport, required[name], `import('@ratekit/flexible/lib/${path}.js') gives another ${name}`);
    checked += 2;
  }
}
const rejection = await new imported.RateLimiterMemory({ points: 0, duration: 1 }).consume('k').catch((r) => r);
assert.ok(rejection instanceof required.RateLimiterRes, 'a refusal from an imported limiter is not instanceof the required RateLimiterRes');
console.log(`@ratekit/flexible: one class per name across import, require and ${Object.keys(PATHS).length} deep paths (${checked} identities)`);
