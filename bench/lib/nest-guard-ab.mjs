// By hand, not a part: the throttler guards alone, in process, without HTTP. Each guard is built
// by Nest (ThrottlerModule.forRoot([{ ttl: 1 h, limit }]) and the guard as a provider of an
// application context, as the HTTP part's servers set them up) and called directly,
// `await guard.canActivate(context)`, on one request from one IP, with a stub execution context
// whose response records headers. The HTTP part's µs per response carries Nest's and the
// platform's cost and the machine's noise; this is the guard's own cost, variant by variant in
// shuffled rounds.
//
//   node bench/lib/nest-guard-ab.mjs [calls=50000] [rounds=5] [only]
//   node --cpu-prof --cpu-prof-dir=/tmp/prof bench/lib/nest-guard-ab.mjs 50000 5 '@ratekit/nestjs, reject'
//
// `only`: run the variants whose label contains it (to profile one of them).
//
// Variants: @nestjs/throttler and @ratekit/nestjs (drop-in), and @ratekit/nestjs in the ratekit
// mode (`algorithm: 'fixed-window'`), each passing (limit NEVER) and refusing (limit 1, the first
// call spent before timing; a refusal throws ThrottlerException, caught here).
// Prints µs per call: the median over rounds, [min…max].

import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import * as incumbent from '@nestjs/throttler';
import * as ours from '@ratekit/nestjs';
import { NEVER, WINDOW_MS } from './http-server.mjs';
import { median, seededRandom } from './stats.mjs';

const calls = Number(process.argv[2] ?? 50_000);
const rounds = Number(process.argv[3] ?? 5);
const only = process.argv[4];

class HelloController {
  hello() {
    return 'hello world';
  }
}

function stubContext() {
  const req = { ip: '127.0.0.1', headers: { 'user-agent': 'bench' } };
  const res = {
    headers: {},
    header(name, value) {
      this.headers[name] = value;
      return this;
    },
  };
  const http = { getRequest: () => req, getResponse: () => res, getNext: () => undefined };
  return {
    getType: () => 'http',
    getClass: () => HelloController,
    getHandler: () => HelloController.prototype.hello,
    getArgs: () => [req, res],
    switchToHttp: () => http,
  };
}

async function guardOf({ ThrottlerGuard, ThrottlerModule }, throttler) {
  class AppModule {}
  Reflect.decorate([Module({ imports: [ThrottlerModule.forRoot([throttler])], providers: [ThrottlerGuard] })], AppModule);
  const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
  return { app, guard: app.get(ThrottlerGuard) };
}

const VARIANTS = [
  ['@nestjs/throttler, pass', incumbent, { ttl: WINDOW_MS, limit: NEVER }],
  ['@ratekit/nestjs, pass', ours, { ttl: WINDOW_MS, limit: NEVER }],
  ['@ratekit/nestjs, ratekit mode, pass', ours, { ttl: WINDOW_MS, limit: NEVER, algorithm: 'fixed-window' }],
  ['@nestjs/throttler, reject', incumbent, { ttl: WINDOW_MS, limit: 1 }],
  ['@ratekit/nestjs, reject', ours, { ttl: WINDOW_MS, limit: 1 }],
  ['@ratekit/nestjs, ratekit mode, reject', ours, { ttl: WINDOW_MS, limit: 1, algorithm: 'fixed-window' }],
];

/** µs per call over `n` calls; counts the refusals. */
async function slice(guard, context, n) {
  let refused = 0;
  const started = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    try {
      await guard.canActivate(context);
    } catch (error) {
      if (error?.getStatus?.() !== 429) throw error;
      refused++;
    }
  }
  return { micros: Number(process.hrtime.bigint() - started) / 1_000 / n, refused };
}

const built = [];
for (const [label, pkg, throttler] of VARIANTS) {
  if (only !== undefined && !label.includes(only)) continue;
  const { app, guard } = await guardOf(pkg, throttler);
  const context = stubContext();
  await slice(guard, context, 1); // the reject variants: spend the one allowed request
  const warm = await slice(guard, context, calls);
  const expectRefused = throttler.limit === 1 ? calls : 0;
  if (warm.refused !== expectRefused) throw new Error(`${label}: ${warm.refused} refusals in ${calls} calls, expected ${expectRefused}`);
  built.push({ label, app, guard, context, micros: [] });
}
const random = seededRandom(1);
for (let r = 0; r < rounds; r++) {
  const order = [...built].sort(() => random() - 0.5);
  for (const v of order) v.micros.push((await slice(v.guard, v.context, calls)).micros);
}
for (const v of built) {
  console.log(`${v.label.padEnd(40)} ${median(v.micros).toFixed(2).padStart(6)} µs/call [${Math.min(...v.micros).toFixed(2)}…${Math.max(...v.micros).toFixed(2)}]`);
  await v.app.close();
}
