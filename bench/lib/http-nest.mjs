// The Nest servers of the HTTP part (bench/http-servers/nestjs-*.mjs): one NestJS 11 app, on
// @nestjs/platform-express or @nestjs/platform-fastify, whose one controller answers GET / with
// HELLO. Plain .mjs, so no decorator syntax: Nest's decorators are applied with Reflect.decorate,
// which is what TypeScript's compiled decorators call, and the limiters go in the way
// @nestjs/throttler documents a global limit: `ThrottlerModule.forRoot([...])` and the guard as
// `APP_GUARD`, with no decorator on the route.

import 'reflect-metadata';
import { Controller, Get, HttpException, HttpStatus, Module } from '@nestjs/common';
import { APP_GUARD, NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { minimalLimiter } from './http-minimal.mjs';
import { HELLO, HOST, limitOf, serveHttp, WINDOW_MS } from './http-server.mjs';

class HelloController {
  hello() {
    return HELLO;
  }
}
Reflect.decorate([Get()], HelloController.prototype, 'hello', Object.getOwnPropertyDescriptor(HelloController.prototype, 'hello'));
Reflect.decorate([Controller()], HelloController);

/** Starts the app of `imports` and `providers` on `platform` ('express' or 'fastify'), on HOST, a free port. */
async function listenNest(platform, { imports = [], providers = [] } = {}) {
  class AppModule {}
  Reflect.decorate([Module({ imports, controllers: [HelloController], providers })], AppModule);
  const adapter = platform === 'fastify' ? new FastifyAdapter() : platform === 'express' ? new ExpressAdapter() : undefined;
  if (adapter === undefined) throw new Error(`expected the platform to be express or fastify, got ${JSON.stringify(platform)}`);
  const app = await NestFactory.create(AppModule, adapter, { logger: false });
  await app.listen(0, HOST);
  return { port: app.getHttpServer().address().port, close: () => app.close() };
}

/**
 * The reference rows: `bare`; `noop`, one global guard that lets everything through (the floor
 * any guard pays); `minimal` / `minimal-reject`, a global guard with lib/http-minimal.mjs's
 * limiter and headers, refusing with an HttpException 429 as the throttlers do (the floor of a
 * throttler).
 */
export function serveNestBare(platform) {
  serveHttp((scenario) => {
    if (scenario === 'bare') return listenNest(platform);
    if (scenario === 'noop') return listenNest(platform, { providers: [{ provide: APP_GUARD, useValue: { canActivate: () => true } }] });
    if (scenario !== 'minimal' && scenario !== 'minimal-reject') throw new Error(`unknown scenario ${scenario}`);
    const decide = minimalLimiter(scenario === 'minimal' ? undefined : 1);
    const guard = {
      canActivate(context) {
        const http = context.switchToHttp();
        const { allowed, headers } = decide(http.getRequest().ip);
        const res = http.getResponse();
        for (const [name, value] of headers) res.header(name, value);
        if (!allowed) throw new HttpException('Too Many Requests', HttpStatus.TOO_MANY_REQUESTS);
        return true;
      },
    };
    return listenNest(platform, { providers: [{ provide: APP_GUARD, useValue: guard }] });
  });
}

/**
 * A throttler package's rows (`throttler`: `@nestjs/throttler` or `@ratekit/nestjs`, which has
 * the same exports), as @nestjs/throttler documents a global limit: `pass` / `reject`, one
 * throttler of limit NEVER or 1 per WINDOW_MS, with its defaults (in-memory storage, client IP
 * tracker, `X-RateLimit-*` headers, `Retry-After` and ThrottlerException on 429).
 * `core-pass` / `core-reject` (ratekit only): the same throttler with `algorithm: 'fixed-window'`,
 * so ratekit's limiter decides (the ratekit mode) instead of the @nestjs/throttler storage.
 */
export function serveNestThrottler(platform, { ThrottlerGuard, ThrottlerModule }) {
  serveHttp((scenario) => {
    const core = scenario.startsWith('core-');
    const throttler = { ttl: WINDOW_MS, limit: limitOf(core ? scenario.slice('core-'.length) : scenario) };
    if (core) throttler.algorithm = 'fixed-window';
    return listenNest(platform, {
      imports: [ThrottlerModule.forRoot([throttler])],
      providers: [{ provide: APP_GUARD, useClass: ThrottlerGuard }],
    });
  });
}
