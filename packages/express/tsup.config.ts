import { defineConfig } from 'tsup';
import { base } from '../../tsup.base';

export default defineConfig({
  ...base,
  // As express-rate-limit's build: the CommonJS export is `rateLimit` itself, carrying every named
  // export, so `require('@ratekit/express')(options)` works beside `require(...).rateLimit`.
  footer: ({ format }) => (format === 'cjs' ? { js: 'module.exports = Object.assign(module.exports.rateLimit, module.exports);' } : {}),
});
