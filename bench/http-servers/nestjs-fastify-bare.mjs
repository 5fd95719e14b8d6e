// NestJS 11 on @nestjs/platform-fastify: bare, with an empty global guard (`noop`), or with the minimal limiter in a global guard (`minimal`, `minimal-reject`). See lib/http-nest.mjs.
import { serveNestBare } from '../lib/http-nest.mjs';

serveNestBare('fastify');
