import { fileURLToPath } from 'node:url';
import type { NextConfig } from 'next';

const config: NextConfig = {
  // The repository's root: the workspace packages (@ratekit/*) are linked from there.
  turbopack: { root: fileURLToPath(new URL('../..', import.meta.url)) },
};

export default config;
