import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { base } from '../tsup.base';

/**
 * What every published package carries besides its code: the licence text it declares, its
 * changelog, and the Node.js versions it supports. npm packs a package's own LICENSE whatever its
 * `files` list says, but not the repository's root one, so each package keeps a copy.
 */
const root = resolve(__dirname, '..');
const rootLicence = readFileSync(join(root, 'LICENSE'), 'utf8');
const published = readdirSync(join(root, 'packages'))
  .map((dir) => ({ dir: join(root, 'packages', dir), manifest: JSON.parse(readFileSync(join(root, 'packages', dir, 'package.json'), 'utf8')) as Manifest }))
  .filter(({ manifest }) => manifest.private !== true);

interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  license?: string;
  files?: string[];
  engines?: { node?: string };
  scripts?: { build?: string };
}

/** Builds that differ from the rule, each with its reason. */
const BUILD_EXCEPTIONS: Record<string, string> = {
  // rate-limiter-flexible is CommonJS only: one CommonJS bundle, an ESM entry re-exporting it (so import and
  // require give the same classes), and rlf's deep paths (lib/<Name>.js), each re-exporting the bundle.
  '@ratekit/flexible': 'tsup && node scripts/esm-entry.mjs && node scripts/deep-paths.mjs',
  // Two entries (the package and ./compat): tsup splits their declarations into shared chunks that import
  // './x.js' from the .d.ts and './x.cjs' from the .d.cts, so the two cannot share one file.
  '@ratekit/hono': 'tsup',
  // Two tsup builds (the package with ./upstash, and ./transport alone, for @ratekit/upstash without
  // node:crypto), neither cleaning the other's output: the script empties dist first.
  '@ratekit/redis': `node -e "require('node:fs').rmSync('dist', { recursive: true, force: true })" && tsup && node ../../scripts/esm-types.mjs`,
};

/** Node.js ranges that differ from the rule, each with its reason. */
const ENGINES_EXCEPTIONS: Record<string, string> = {
  // core reaches node:diagnostics_channel through process.getBuiltinModule (Node 20.16, 22.3); before, no events.
  '@ratekit/opentelemetry': '^20.16.0 || ^22.3.0 || >=24.0.0',
};

describe('published packages', () => {
  it('are found', () => {
    expect(published.map(({ manifest }) => manifest.name)).toContain('@ratekit/core');
  });

  it('are built without source maps (bench/notes/install-size.md)', () => {
    expect(base.sourcemap).toBe(false);
  });

  describe.each(published.map((p) => [p.manifest.name, p] as const))('%s', (_name, { dir, manifest }) => {
    it('declares MIT and ships the root LICENSE text', () => {
      expect(manifest.license).toBe('MIT');
      expect(readFileSync(join(dir, 'LICENSE'), 'utf8')).toBe(rootLicence);
    });

    it('ships a CHANGELOG.md with an entry for its version', () => {
      expect(manifest.files).toContain('CHANGELOG.md');
      expect(readFileSync(join(dir, 'CHANGELOG.md'), 'utf8')).toContain(`\n## ${manifest.version}\n`);
    });

    it('builds from the shared tsup base, and ships each type declaration once or, as an adapter, its CommonJS entry as the function', () => {
      expect(readFileSync(join(dir, 'tsup.config.ts'), 'utf8')).toContain("import { base } from '../../tsup.base';");
      expect(manifest.scripts?.build).toBe(BUILD_EXCEPTIONS[manifest.name] ?? manifest.scripts?.build?.match(/^tsup && node \.\.\/\.\.\/scripts\/(esm-types\.mjs|cjs-types\.mjs [A-Za-z]+)$/)?.[0]);
    });

    it('supports Node.js 20, 22 and 24', () => {
      expect(manifest.engines?.node).toBe(ENGINES_EXCEPTIONS[manifest.name] ?? '^20.0.0 || ^22.0.0 || >=24.0.0');
    });
  });
});
