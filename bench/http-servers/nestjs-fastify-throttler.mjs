// NestJS 11 on @nestjs/platform-fastify with @nestjs/throttler 6 and its defaults: ThrottlerModule.forRoot, ThrottlerGuard as APP_GUARD,
// in-memory storage, client IP tracker, X-RateLimit-* headers. See lib/http-nest.mjs.
import * as throttler from '@nestjs/throttler';
import { serveNestThrottler } from '../lib/http-nest.mjs';

serveNestThrottler('fastify', throttler);
