import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
  // As express-rate-limit's build: the CommonJS export is `rateLimit` itself, carrying every named
  // export, so `require('@ratekit/express')(options)` works beside `require(...).rateLimit`.
  footer: ({ format }) => (format === 'cjs' ? { js: 'module.exports = Object.assign(module.exports.rateLimit, module.exports);' } : {}),
});
