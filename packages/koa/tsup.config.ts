import { defineConfig } from 'tsup';
import { base } from '../../tsup.base';

export default defineConfig({
  ...base,
  // As koa-ratelimit's: the CommonJS export is the middleware factory itself, carrying every named
  // export (`.default`, `.ratelimit`, `.rateLimit`, `.ipKeyGenerator`), so `require('@ratekit/koa')(options)` works.
  footer: ({ format }) => (format === 'cjs' ? { js: 'module.exports = Object.assign(module.exports.ratelimit, module.exports);' } : {}),
});
