import { defineConfig } from 'tsup';
import { base } from '../../tsup.base';

// Two entries: the TCP store (index) and the Upstash store (upstash), which shares the Lua and the
// decision protocol but none of the Node-only code (node:crypto, cluster-key-slot); and the script
// transport alone (transport), which @ratekit/upstash loads without node:crypto.
export default defineConfig({ ...base, entry: ['src/index.ts', 'src/upstash.ts', 'src/transport.ts'] });
