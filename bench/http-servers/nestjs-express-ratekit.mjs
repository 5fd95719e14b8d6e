// NestJS 11 on @nestjs/platform-express with @ratekit/nestjs (the built package), as a user migrating from @nestjs/throttler
// keeps it: the same module and guard as nestjs-express-throttler.mjs (`pass`, `reject`), or with `algorithm: 'fixed-window'`
// on the throttler (`core-pass`, `core-reject`: the ratekit mode). See lib/http-nest.mjs.
import * as ratekit from '@ratekit/nestjs';
import { serveNestThrottler } from '../lib/http-nest.mjs';

serveNestThrottler('express', ratekit);
