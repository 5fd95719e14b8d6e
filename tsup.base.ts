// What every published package's build shares (packages/*/tsup.config.ts spread it): ESM and CommonJS
// builds for Node 20, each with its type entry (dist/index.d.ts and dist/index.d.cts).
//
// No source maps: they carried the whole source (`sourcesContent`) and made 60 % of an install
// (0.94 MB of @ratekit/express + @ratekit/core's 1.5 MB), and a map without its sources points at a
// src/ that is not published. The JavaScript stays unminified, so a stack trace reads as the code does
// (bench/notes/install-size.md measures both choices).
//
// `node:` imports keep their prefix (tsup 8 strips it by default for a `node` target): Deno,
// Bun and Cloudflare Workers resolve `node:crypto`, and a Worker bundler that marks `node:*`
// external cannot resolve a bare `crypto`.
import type { Options } from 'tsup';

export const base = {
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: false,
  target: 'node20',
  removeNodeProtocol: false,
} satisfies Options;
