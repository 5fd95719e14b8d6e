import { defineConfig } from 'tsup';
import { base } from '../../tsup.base';

// One CommonJS bundle; the ESM entry re-exports it (scripts/esm-entry.mjs says why).
export default defineConfig({ ...base, format: ['cjs'] });
