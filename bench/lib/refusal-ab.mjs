#!/usr/bin/env node
// By hand, not a part (issue 31 §2): the cost of a cached refusal in process, without sockets, for two
// builds in one run. Each build is a checkout whose packages are built and installed (`pnpm install`,
// `pnpm build`): this one, and `--old=<root>` (e.g. a copy of the tree at the previous commit).
//
//   node bench/lib/refusal-ab.mjs [--old=/tmp/refusal-base] [--calls=200000] [--rounds=7]
//
// Per build, the limiter on a shared store that answers with a Promise (core's memory store behind
// `Promise.resolve`, as @ratekit/redis answers; `shared: true`, so the refusal cache is on), a fixed
// window of 10 per 1 000 ms on one key, as the flood part's. Variants:
//
//   core           `await limiter.consume(key)`: the limiter alone
//   <fw>           the adapter's middleware in an app of the framework (express, fastify, koa), default
//                  options (legacy headers), one request at a time through the framework's own request
//                  path on an http.IncomingMessage / ServerResponse pair with no socket; `<fw>-noheaders`:
//                  headers off (express: standardHeaders/legacyHeaders false; fastify: the same;
//                  koa: legacyHeaders false, which leaves Retry-After, as koa-ratelimit always sends it)
//   <fw>-bare      the same app without a limiter (a 200 "hello world"), the floor
//
// Each round runs every variant of both builds in a shuffled order, `calls` requests each after a
// warm-up; prints ns per request, median [min…max] over rounds, and the load average. The window
// reopens every second, so about 10 admissions per second go through the store: as in the flood.

import { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import { Writable } from 'node:stream';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { median, seededRandom, shuffled } from './stats.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: { old: { type: 'string' }, calls: { type: 'string', default: '200000' }, rounds: { type: 'string', default: '7' }, only: { type: 'string' } },
});
const calls = Number(values.calls);
const rounds = Number(values.rounds);
const builds = [{ name: 'new', root: resolve(here, '../..') }];
if (values.old !== undefined) builds.unshift({ name: 'old', root: resolve(values.old) });

const LIMIT = 10;
const WINDOW_MS = 1_000;
/** A package as the bench of `root` resolves it: our packages' ESM builds, the frameworks (CommonJS) through require. */
const benchModule = async (root, name) =>
  name.startsWith('@ratekit/') ? import(pathToFileURL(join(root, 'bench/node_modules', name, 'dist/index.js')).href) : { default: createRequire(join(root, 'bench/package.json'))(name) };

/** A shared store answering with Promises: core's memory store, as far as the limiter can tell, @ratekit/redis. */
function asyncSharedStore(core) {
  const memory = core.memoryStore();
  return {
    name: 'async-memory',
    shared: true,
    clock: 'caller',
    evaluate: (request) => Promise.resolve(memory.evaluate(request)),
    resetKey: (key, namespace, limits) => Promise.resolve(memory.resetKey(key, namespace, limits)),
  };
}

const HEADERS = { host: '127.0.0.1', 'user-agent': 'refusal-ab' };

/** A socket that takes every write and drops it: the response then ends as on a real connection ('finish'). */
function socket() {
  const s = new Writable({
    write(_chunk, _encoding, callback) {
      callback();
    },
    writev(_chunks, callback) {
      callback();
    },
  });
  s.remoteAddress = '127.0.0.1';
  s.remoteFamily = 'IPv4';
  s.readable = true;
  s.setTimeout = () => s;
  return s;
}

/** One request through a Node request listener: resolves with the status once the response has finished. */
function request(listener) {
  const s = socket();
  const req = new IncomingMessage(s);
  req.method = 'GET';
  req.url = '/';
  req.headers = HEADERS;
  req.httpVersionMajor = 1;
  req.httpVersionMinor = 1;
  req.httpVersion = '1.1';
  req.complete = true;
  req.push(null);
  const res = new ServerResponse(req);
  res.assignSocket(s);
  return new Promise((done) => {
    res.once('finish', () => {
      res.detachSocket(s);
      done(res.statusCode);
    });
    listener(req, res);
  });
}

async function variants(build) {
  const core = await benchModule(build.root, '@ratekit/core');
  const out = [];
  const limiter = core.createLimiter({ limits: { algorithm: 'fixed-window', limit: LIMIT, windowMs: WINDOW_MS }, store: asyncSharedStore(core) });
  out.push({ id: 'core', run: () => limiter.consume('127.0.0.1') });

  const { default: express } = await benchModule(build.root, 'express');
  const { rateLimit } = await benchModule(build.root, '@ratekit/express');
  const expressApp = (options) => {
    const app = express();
    if (options !== undefined) app.use(rateLimit({ windowMs: WINDOW_MS, limit: LIMIT, algorithm: 'fixed-window', store: asyncSharedStore(core), ...options }));
    app.get('/', (_req, res) => res.send('hello world'));
    return app;
  };
  for (const [id, app] of [
    ['express-bare', expressApp(undefined)],
    ['express', expressApp({})],
    ['express-noheaders', expressApp({ standardHeaders: false, legacyHeaders: false })],
  ])
    out.push({ id, run: () => request(app) });

  const { default: Koa } = await benchModule(build.root, 'koa');
  const { ratelimit } = await benchModule(build.root, '@ratekit/koa');
  const koaApp = (options) => {
    const app = new Koa();
    if (options !== undefined) app.use(ratelimit({ duration: WINDOW_MS, max: LIMIT, algorithm: 'fixed-window', store: asyncSharedStore(core), ...options }));
    app.use((ctx) => {
      ctx.body = 'hello world';
    });
    return app.callback();
  };
  for (const [id, listener] of [
    ['koa-bare', koaApp(undefined)],
    ['koa', koaApp({})],
    ['koa-noheaders', koaApp({ legacyHeaders: false })],
  ])
    out.push({ id, run: () => request(listener) });

  const { default: Fastify } = await benchModule(build.root, 'fastify');
  const { default: ratekitFastify } = await benchModule(build.root, '@ratekit/fastify');
  const fastifyApp = async (options) => {
    const app = Fastify({ logger: false });
    if (options !== undefined) await app.register(ratekitFastify, { max: LIMIT, timeWindow: WINDOW_MS, algorithm: 'fixed-window', store: asyncSharedStore(core), ...options });
    app.get('/', async () => 'hello world');
    await app.ready();
    return app.routing;
  };
  for (const [id, options] of [
    ['fastify-bare', undefined],
    ['fastify', {}],
    ['fastify-noheaders', { standardHeaders: false, legacyHeaders: false }],
  ]) {
    const listener = await fastifyApp(options);
    out.push({ id, run: () => request(listener) });
  }
  return out.filter((v) => values.only === undefined || v.id.startsWith(values.only));
}

async function time(variant, n) {
  const codes = new Map();
  const started = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const code = await variant.run();
    if (typeof code === 'number') codes.set(code, (codes.get(code) ?? 0) + 1);
  }
  const ns = Number(process.hrtime.bigint() - started) / n;
  return { ns, codes };
}

const all = [];
for (const build of builds) for (const v of await variants(build)) all.push({ ...v, build: build.name, label: `${build.name} ${v.id}` });
const load = [loadavg().map((x) => x.toFixed(2))];
for (const v of all) await time(v, Math.min(calls, 20_000)); // warm-up
const results = new Map(all.map((v) => [v.label, []]));
const random = seededRandom(31);
for (let round = 1; round <= rounds; round++) {
  for (const v of shuffled(all, random)) {
    const { ns, codes } = await time(v, calls);
    results.get(v.label).push(ns);
    if (round === 1 && codes.size > 0) v.codes = [...codes].map(([c, n]) => `${n}×${c}`).join(' ');
  }
}
load.push(loadavg().map((x) => x.toFixed(2)));
const fmt = (xs) => `${median(xs).toFixed(0)} [${Math.min(...xs).toFixed(0)}…${Math.max(...xs).toFixed(0)}]`;
console.log(`ns per request, median [min…max] over ${rounds} rounds of ${calls}; load average ${load[0].join(' ')} → ${load[1].join(' ')}; node ${process.version}`);
for (const id of [...new Set(all.map((v) => v.id))]) {
  const cells = builds.map((b) => {
    const xs = results.get(`${b.name} ${id}`);
    return xs === undefined ? '' : `${b.name} ${fmt(xs)}`;
  });
  const floor = id === 'core' || id.endsWith('-bare') ? undefined : `${id.split('-')[0]}-bare`;
  const added =
    floor === undefined ? '' : `  added over bare: ${builds.map((b) => `${b.name} ${(median(results.get(`${b.name} ${id}`)) - median(results.get(`${b.name} ${floor}`))).toFixed(0)}`).join(', ')}`;
  const codes = all.find((v) => v.id === id && v.codes)?.codes ?? '';
  console.log(`${id.padEnd(18)} ${cells.join('   ')}${added}  ${codes}`);
}
