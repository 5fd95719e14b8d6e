#!/usr/bin/env node
// Writes rate-limiter-flexible's deep import paths into dist/lib/ after tsup (`pnpm build` runs it):
// `@ratekit/flexible/lib/RateLimiterRedis.js` (and without `.js`), `lib/component/RateLimiterQueueError`,
// `lib/helper/isRateLimiterCompatible`, … each as rlf ships them.
//
//   node scripts/deep-paths.mjs [--allow-missing]
//
// Every file re-exports from the one bundle (dist/index.cjs or dist/index.js), so a class reached by a
// deep path is the root's class: `instanceof` holds across them. For each path:
//   dist/lib/<path>.cjs    module.exports = the class (rlf's `module.exports = class …`), or rlf's object
//   dist/lib/<path>.d.cts  export = the class
//   dist/lib/<path>.js     export default the class (what `import X from '…/lib/X.js'` gives on rlf)
//   dist/lib/<path>.d.ts   the same, typed
// package.json's exports map `./lib/*.js` and `./lib/*` to these.
//
// A name in PATHS that the bundle does not export is an error (the package would ship a broken path),
// unless --allow-missing (for a partial build while the package is being written).
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * rlf 11.4's lib/ paths users import, and what each exports: one name (`module.exports = <it>`), or
 * several (`module.exports = { … }`, as lib/RateLimiterCluster.js does).
 */
export const PATHS = {
  RateLimiterAbstract: 'RateLimiterAbstract',
  RateLimiterInsuredAbstract: 'RateLimiterInsuredAbstract',
  RateLimiterStoreAbstract: 'RateLimiterStoreAbstract',
  RateLimiterCompatibleAbstract: 'RateLimiterCompatibleAbstract',
  RateLimiterRes: 'RateLimiterRes',
  RateLimiterMemory: 'RateLimiterMemory',
  RateLimiterRedis: 'RateLimiterRedis',
  RateLimiterMemcache: 'RateLimiterMemcache',
  RateLimiterPostgres: 'RateLimiterPostgres',
  RateLimiterCluster: ['RateLimiterClusterMaster', 'RateLimiterClusterMasterPM2', 'RateLimiterCluster'],
  RateLimiterUnion: 'RateLimiterUnion',
  RateLimiterQueue: 'RateLimiterQueue',
  BurstyRateLimiter: 'BurstyRateLimiter',
  RLWrapperBlackAndWhite: 'RLWrapperBlackAndWhite',
  RLWrapperTimeouts: 'RLWrapperTimeouts',
  RateLimiterRedisNonAtomic: 'RateLimiterRedisNonAtomic',
  RateLimiterMongo: 'RateLimiterMongo',
  RateLimiterMySQL: 'RateLimiterMySQL',
  RateLimiterDynamo: 'RateLimiterDynamo',
  RateLimiterPrisma: 'RateLimiterPrisma',
  RateLimiterValkey: 'RateLimiterValkey',
  RateLimiterValkeyGlide: 'RateLimiterValkeyGlide',
  RateLimiterSQLite: 'RateLimiterSQLite',
  RateLimiterEtcd: 'RateLimiterEtcd',
  RateLimiterEtcdNonAtomic: 'RateLimiterEtcdNonAtomic',
  RateLimiterDrizzle: 'RateLimiterDrizzle',
  RateLimiterDrizzleNonAtomic: 'RateLimiterDrizzleNonAtomic',
  ExpressBruteFlexible: 'ExpressBruteFlexible',
  constants: ['LIMITER_TYPES', 'ERR_UNKNOWN_LIMITER_TYPE_MESSAGE'],
  'component/RateLimiterQueueError': 'RateLimiterQueueError',
  'component/RateLimiterSetupError': 'RateLimiterSetupError',
  'component/RateLimiterEtcdTransactionFailedError': 'RateLimiterEtcdTransactionFailedError',
  'helper/isRateLimiterCompatible': 'isRateLimiterCompatible',
};

const packageDir = dirname(dirname(fileURLToPath(import.meta.url)));

if (process.argv[1] === fileURLToPath(import.meta.url)) main(process.argv.includes('--allow-missing'));

function main(allowMissing) {
  const dist = join(packageDir, 'dist');
  const bundle = createRequire(join(dist, 'index.cjs'))('./index.cjs');
  const missing = [];
  let written = 0;
  for (const [path, exported] of Object.entries(PATHS)) {
    const names = typeof exported === 'string' ? [exported] : exported;
    const absent = names.filter((name) => bundle[name] === undefined);
    if (absent.length > 0) {
      missing.push(`lib/${path} (${absent.join(', ')})`);
      continue;
    }
    const file = join(dist, 'lib', path);
    mkdirSync(dirname(file), { recursive: true });
    const up = relative(dirname(file), dist).split('\\').join('/') || '.';
    for (const [suffix, text] of Object.entries(sources(up, exported))) writeFileSync(`${file}${suffix}`, text);
    written++;
  }
  if (missing.length > 0) {
    const message = `the bundle does not export ${missing.join('; ')}`;
    if (!allowMissing) {
      console.error(`✖ deep-paths: ${message}`);
      process.exit(1);
    }
    console.warn(`! deep-paths (--allow-missing): skipped ${message}`);
  }
  console.log(`dist/lib: ${written} deep paths, each re-exporting dist/index`);
}

/** The four files of one deep path, `up` being the relative path from its folder to dist/. */
function sources(up, exported) {
  const header = '// rate-limiter-flexible deep path: re-exports the package bundle (class identity holds).\n';
  if (typeof exported === 'string') {
    return {
      '.cjs': `${header}'use strict';\nmodule.exports = require('${up}/index.cjs').${exported};\n`,
      '.d.cts': `import { ${exported} } from '${up}/index.cjs';\nexport = ${exported};\n`,
      '.js': `${header}import { ${exported} } from '${up}/index.js';\nexport default ${exported};\n`,
      '.d.ts': `import { ${exported} } from '${up}/index.js';\nexport default ${exported};\n`,
    };
  }
  const list = exported.join(', ');
  const typed = exported.map((name) => `${name}: typeof ${name}`).join('; ');
  return {
    '.cjs': `${header}'use strict';\nconst bundle = require('${up}/index.cjs');\nmodule.exports = { ${exported.map((name) => `${name}: bundle.${name}`).join(', ')} };\n`,
    '.d.cts': `export { ${list} } from '${up}/index.cjs';\n`,
    '.js': `${header}import { ${list} } from '${up}/index.js';\nexport { ${list} };\nexport default { ${list} };\n`,
    '.d.ts': `import { ${list} } from '${up}/index.js';\nexport { ${list} };\ndeclare const _default: { ${typed} };\nexport default _default;\n`,
  };
}
