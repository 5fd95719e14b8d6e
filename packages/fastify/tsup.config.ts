import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
  // As @fastify/rate-limit's: the CommonJS export is the plugin itself, carrying every named export
  // (`.default`, `.fastifyRateLimit`, `.normalizeIP`), so `require('@ratekit/fastify')` registers as is.
  footer: ({ format }) => (format === 'cjs' ? { js: 'module.exports = Object.assign(module.exports.fastifyRateLimit, module.exports);' } : {}),
});
