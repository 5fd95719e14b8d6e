import { defineConfig } from 'tsup';

// One build (a second config would race this one's `clean`): the library, ESM + CJS with types,
// and the `ratekit` bin (dist/bin.js, ESM as the package is "type": "module"; tsup keeps its shebang).
export default defineConfig({
  entry: { index: 'src/index.ts', bin: 'src/bin.ts' },
  format: ['esm', 'cjs'],
  dts: { entry: { index: 'src/index.ts' } },
  clean: true,
  sourcemap: true,
  target: 'node20',
});
