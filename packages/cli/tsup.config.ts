import { defineConfig } from 'tsup';

export default defineConfig([
  {
    entry: ['src/index.ts'],
    format: ['esm', 'cjs'],
    dts: true,
    clean: true,
    sourcemap: true,
    target: 'node20',
  },
  {
    // The bin: ESM only (the package is "type": "module"), the shebang kept by tsup.
    entry: ['src/bin.ts'],
    format: ['esm'],
    sourcemap: true,
    target: 'node20',
  },
]);
