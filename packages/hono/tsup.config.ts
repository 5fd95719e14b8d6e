import { defineConfig } from 'tsup';
import { base } from '../../tsup.base';

// Two entries: the package, and `@ratekit/hono/compat` (the hono-rate-limiter drop-in alone).
export default defineConfig({ ...base, entry: { index: 'src/index.ts', compat: 'src/compat/index.ts' } });
