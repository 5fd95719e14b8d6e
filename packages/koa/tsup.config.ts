import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
  // As koa-ratelimit's: the CommonJS export is the middleware factory itself, carrying every named
  // export (`.default`, `.ratelimit`, `.rateLimit`, `.ipKeyGenerator`), so `require('@ratekit/koa')(options)` works.
  footer: ({ format }) => (format === 'cjs' ? { js: 'module.exports = Object.assign(module.exports.ratelimit, module.exports);' } : {}),
});
