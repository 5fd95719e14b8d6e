import { defineConfig } from 'tsup';
import { base } from '../../tsup.base';

// One build (a second config would race this one's `clean`): the library, ESM + CJS with types,
// and the `ratekit` bin (dist/bin.js, ESM as the package is "type": "module"; tsup keeps its shebang).
export default defineConfig({
  ...base,
  entry: { index: 'src/index.ts', bin: 'src/bin.ts' },
  dts: { entry: { index: 'src/index.ts' } },
});
