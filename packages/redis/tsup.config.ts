import { defineConfig } from 'tsup';
import { base } from '../../tsup.base';

// Two entries: the TCP store (index) and the Upstash store (upstash), which shares the Lua and the
// decision protocol but none of the Node-only code (node:crypto, cluster-key-slot). The script
// transport alone (transport, for @ratekit/upstash, which must load without node:crypto) is a
// build of its own, so that index's type entry stays self-contained (scripts/esm-types.mjs). Neither
// cleans (one's clean removed the other's types): the build script empties dist first.
export default defineConfig([
  { ...base, entry: ['src/index.ts', 'src/upstash.ts'], clean: false },
  { ...base, entry: ['src/transport.ts'], clean: false },
]);
