import { defineConfig } from 'tsup';
import { base } from '../../tsup.base';

export default defineConfig({
  ...base,
  // As @fastify/rate-limit's: the CommonJS export is the plugin itself, carrying every named export
  // (`.default`, `.fastifyRateLimit`, `.normalizeIP`), so `require('@ratekit/fastify')` registers as is.
  footer: ({ format }) => (format === 'cjs' ? { js: 'module.exports = Object.assign(module.exports.fastifyRateLimit, module.exports);' } : {}),
});
