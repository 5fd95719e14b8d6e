// Imported first by every runtime bundle, so that test files imported statically (workerd-only files, which
// export their Durable Object classes) find describe/it/expect when they register their tests.
import { installGlobals } from './runner.mjs';

installGlobals();
