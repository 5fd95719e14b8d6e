// The lint rule that keeps each package to the others' public exports (scripts/eslint/no-package-internals.mjs).
import path from 'node:path';
import { RuleTester } from 'eslint';
import { noPackageInternals } from '../scripts/eslint/no-package-internals.mjs';

const root = path.resolve(__dirname, '..');
const inPackage = (file: string) => path.join(root, 'packages', file);

const tester = new RuleTester({ languageOptions: { ecmaVersion: 2024, sourceType: 'module' } });

tester.run('no-package-internals', noPackageInternals, {
  valid: [
    { filename: inPackage('express/src/index.ts'), code: "import { createLimiter } from '@ratekit/core';" },
    { filename: inPackage('express/src/index.ts'), code: "import { upstashStore } from '@ratekit/redis/upstash';" },
    { filename: inPackage('express/src/compat/options.ts'), code: "import { x } from '../types.js';" },
    { filename: inPackage('core/tsup.config.ts'), code: "import { base } from '../../tsup.base';" },
    { filename: path.join(root, 'bench/run.mjs'), code: "import { x } from '../packages/core/src/keys.js';" },
  ],
  invalid: [
    {
      filename: inPackage('express/src/index.ts'),
      code: "import { assertSubnet } from '../../core/src/validate.js';",
      errors: [{ messageId: 'relative' }],
    },
    {
      filename: inPackage('hono/src/compat/store.ts'),
      code: "export { scripts } from '../../../redis/src/lua';",
      errors: [{ messageId: 'relative' }],
    },
    { filename: inPackage('fetch/src/index.ts'), code: "import { x } from '@ratekit/core/src/keys';", errors: [{ messageId: 'subpath' }] },
    { filename: inPackage('fetch/src/index.ts'), code: "const m = import('@ratekit/redis/dist/index.js');", errors: [{ messageId: 'subpath' }] },
  ],
});
