// The demo: `pnpm demo [express|koa|fastify|nestjs|nestjs-fastify|hono|hono-bun|hono-deno|hono-workerd|nextjs|all]` (default express).
// nextjs is examples/nextjs-middleware/demo.mjs: `next build`, `next start` and traffic of its own (a Next.js proxy and
// a route handler, over a local Upstash REST endpoint in front of Redis); see its README.
// hono runs examples/hono-api on Node; hono-bun, hono-deno and hono-workerd run the same app on Bun, Deno and workerd
// (the binaries of the root devDependencies bun, deno and workerd; for workerd, src/worker.js bundled with esbuild).
// For each framework it starts that example API (examples/<framework>-api) as
// a separate process on a free loopback port, sends it real HTTP traffic (a burst, then a steady rate, on both
// routes), prints what was allowed and refused and one full set of response
// headers of a 200 and of a 429, then stops the server.
//
// Exits 0 when both routes refused some requests with 429 and correct
// headers; non-zero when the server failed or the limits did not show.
// The server imports the built packages (dist): run `pnpm demo` from the
// repository root, which builds first.
import { execFileSync, fork, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

/** The example app of each framework; all of them apply the same read and write policies. */
const FRAMEWORKS = {
  express: 'express-api',
  koa: 'koa-api',
  fastify: 'fastify-api',
  nestjs: 'nestjs-api',
  'nestjs-fastify': 'nestjs-api',
  hono: 'hono-api',
  'hono-bun': 'hono-api',
  'hono-deno': 'hono-api',
  'hono-workerd': 'hono-api',
};
/**
 * Servers that are not Node processes: the binary (node_modules/.bin) and its arguments. They print
 * `listening on http://<host>:<port>` (Bun, Deno) or listen on the port given (workerd).
 */
const OTHER_RUNTIMES = {
  'hono-bun': { binary: 'bun', args: () => ['src/server.bun.js'] },
  'hono-deno': { binary: 'deno', args: () => ['run', '--allow-net', '--allow-env', '--allow-read', '--allow-sys', 'src/server.deno.js'] },
  'hono-workerd': { binary: 'workerd', args: (port) => ['serve', 'workerd.capnp', '--socket-addr', `http=127.0.0.1:${port}`], bundle: { entry: 'src/worker.js', outfile: 'dist/worker.js' } },
};
/**
 * Headers every demo request carries, per framework. workerd runs the app as a Worker, whose client address is
 * `cf-connecting-ip`; Cloudflare's edge sets it, and locally there is no edge, so the demo sends it as the edge would.
 */
const REQUEST_HEADERS = { 'hono-workerd': { 'cf-connecting-ip': '127.0.0.1' } };
/** Examples written in TypeScript (Nest's decorators): compiled by their own `tsc -p` before they start, and started from their build. */
const BUILT = { 'nestjs-api': { tsconfig: 'tsconfig.json', server: 'dist/main.js' } };
/** Per framework, the environment its server is started with besides PORT and HOST. */
const ENV = { nestjs: { NEST_PLATFORM: 'express' }, 'nestjs-fastify': { NEST_PLATFORM: 'fastify' } };
/**
 * The headers a 429 (`refusal`) and a 200 (`allowed`) must carry. @nestjs/throttler, and so
 * @ratekit/nestjs, sends `X-RateLimit-*` on the requests it lets through, none on a refusal.
 */
const EXPECTED_HEADERS = { refusal: ['retry-after', 'ratelimit', 'ratelimit-policy', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'], allowed: [] };
const NEST_EXPECTED_HEADERS = {
  refusal: ['retry-after', 'ratelimit', 'ratelimit-policy'],
  allowed: ['ratelimit', 'ratelimit-policy', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'],
};
const expectedHeadersOf = (framework) => (framework.startsWith('nestjs') ? NEST_EXPECTED_HEADERS : EXPECTED_HEADERS);
const exampleDir = (framework) => fileURLToPath(new URL(`./${FRAMEWORKS[framework]}/`, import.meta.url));
const serverOf = (framework) => `${exampleDir(framework)}${BUILT[FRAMEWORKS[framework]]?.server ?? 'src/server.js'}`;
const STARTUP_TIMEOUT_MS = 10_000;

/** Per route: the traffic to send. */
const PLAN = [
  {
    method: 'GET',
    path: '/items',
    policy: 'read policy: token bucket, burst 20, refilled 10 per second',
    burst: 30,
    steady: { perSecond: 20, seconds: 2 },
  },
  {
    method: 'POST',
    path: '/items',
    policy: 'write policy: sliding window, 5 per 10 seconds',
    burst: 8,
    steady: { perSecond: 2, seconds: 2 },
  },
];

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
/** The TypeScript examples compiled in this run (see build). Declared before main() runs, which reaches build() before its first await. */
const compiled = new Set();

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(`demo failed: ${error?.stack ?? error}`);
    process.exit(1);
  },
);

async function main() {
  const choice = process.argv[2] ?? 'express';
  if (choice !== 'all' && choice !== 'nextjs' && !(choice in FRAMEWORKS)) {
    console.error(`usage: pnpm demo [${Object.keys(FRAMEWORKS).join('|')}|nextjs|all]  (got ${JSON.stringify(choice)})`);
    return 2;
  }
  const frameworks = choice === 'all' ? Object.keys(FRAMEWORKS) : choice === 'nextjs' ? [] : [choice];
  let code = 0;
  try {
    for (const framework of frameworks) code = Math.max(code, await demo(framework));
  } finally {
    agent.destroy();
  }
  if (choice === 'nextjs' || choice === 'all') {
    const { demoNext } = await import('./nextjs-middleware/demo.mjs');
    code = Math.max(code, await demoNext());
  }
  return code;
}

async function demo(framework) {
  build(framework);
  const server = framework in OTHER_RUNTIMES ? await startOtherRuntime(framework) : await startServer(framework);
  const env = Object.entries(ENV[framework] ?? {})
    .map(([name, value]) => `, ${name}=${value}`)
    .join('');
  const runtime = server.runtime === undefined ? '' : ` on ${server.runtime}`;
  console.log(`ratekit demo: examples/${FRAMEWORKS[framework]}${runtime} on http://127.0.0.1:${server.port} (server pid ${server.child.pid}${env})\n`);
  try {
    const results = await Promise.all(PLAN.map((route) => drive(server.port, route, REQUEST_HEADERS[framework] ?? {})));
    return report(results, expectedHeadersOf(framework));
  } finally {
    await stopServer(server.child);
  }
}

/** Compiles a TypeScript example with its own tsconfig (the repository's TypeScript), once per run; the others need no build. */
function build(framework) {
  const built = BUILT[FRAMEWORKS[framework]];
  if (built === undefined || compiled.has(FRAMEWORKS[framework])) return;
  compiled.add(FRAMEWORKS[framework]);
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', `${exampleDir(framework)}${built.tsconfig}`], { stdio: 'inherit' });
}

/** Forks the framework's server.js with PORT=0 and waits for it to report the port it got. */
function startServer(framework) {
  return new Promise((resolve, reject) => {
    const child = fork(serverOf(framework), [], {
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ...ENV[framework] },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`the server did not start within ${STARTUP_TIMEOUT_MS} ms`));
    }, STARTUP_TIMEOUT_MS);
    child.once('message', (message) => {
      clearTimeout(timer);
      if (typeof message?.listening === 'number') resolve({ child, port: message.listening });
      else reject(new Error(`unexpected message from the server: ${JSON.stringify(message)}`));
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the server exited before listening (code ${code}, signal ${signal}); did \`pnpm build\` run?`));
    });
    child.once('error', reject);
  });
}

async function stopServer(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  // The npm launchers of bun, deno and workerd start the real binary as a child: those servers run in a process
  // group of their own, and the group is stopped.
  const kill = (signal) => {
    try {
      if (child.spawnargs[0]?.includes('node_modules')) process.kill(-child.pid, signal);
      else child.kill(signal);
    } catch {
      child.kill(signal);
    }
  };
  kill('SIGTERM');
  await Promise.race([exited, sleep(3_000).then(() => kill('SIGKILL'))]);
}

/**
 * Starts the example on Bun, Deno or workerd (the root devDependencies' binaries, node_modules/.bin), in the
 * example's directory, and resolves once it answers GET /health. workerd serves the Worker bundled here.
 */
async function startOtherRuntime(framework) {
  const { binary, args, bundle } = OTHER_RUNTIMES[framework];
  const dir = exampleDir(framework);
  const path = fileURLToPath(new URL(`../node_modules/.bin/${binary}`, import.meta.url));
  if (!existsSync(path)) throw new Error(`${binary} is not installed (node_modules/.bin/${binary}): run pnpm install`);
  if (bundle !== undefined) {
    const esbuild = createRequire(import.meta.url)('esbuild');
    await esbuild.build({
      entryPoints: [`${dir}${bundle.entry}`],
      outfile: `${dir}${bundle.outfile}`,
      bundle: true,
      format: 'esm',
      platform: 'neutral',
      target: 'es2022',
      mainFields: ['module', 'main'],
      conditions: ['workerd', 'worker', 'browser', 'import'],
      external: ['node:*', 'cloudflare:*'],
      logLevel: 'error',
    });
  }
  const port = await freePort();
  const child = spawn(path, args(port), { cwd: dir, env: { ...process.env, PORT: String(port), HOST: '127.0.0.1' }, stdio: ['ignore', 'pipe', 'inherit'], detached: true });
  let banner = '';
  child.stdout.on('data', (chunk) => {
    banner += chunk;
  });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(`exited (code ${code}, signal ${signal})`)));
  const deadline = Date.now() + STARTUP_TIMEOUT_MS * 3;
  for (;;) {
    const answer = await Promise.race([exited, request(port, 'GET', '/health', undefined, REQUEST_HEADERS[framework] ?? {}).catch(() => undefined)]);
    if (typeof answer === 'string') throw new Error(`${binary} ${answer} before answering: ${banner.trim()}`);
    if (answer?.status === 200) break;
    if (Date.now() > deadline) {
      await stopServer(child);
      throw new Error(`${binary} did not answer GET /health within ${(STARTUP_TIMEOUT_MS * 3) / 1000} s`);
    }
    await sleep(100);
  }
  const runtime = banner.match(/\((Bun [^)]+|Deno [^)]+)\)/)?.[1] ?? (versionOf(path) || binary);
  return { child, port, runtime };
}

function versionOf(path) {
  try {
    return execFileSync(path, ['--version'], { encoding: 'utf8' }).trim().split('\n')[0];
  } catch {
    return '';
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/** Sends one route's burst, then its steady rate; returns the counts and one 200 and one 429. */
async function drive(port, route, headers) {
  const send = () => request(port, route.method, route.path, route.method === 'POST' ? { name: 'demo' } : undefined, headers);
  const phases = [];

  const burst = await Promise.all(Array.from({ length: route.burst }, send));
  phases.push({ label: `burst   ${route.burst} at once`, responses: burst });

  const { perSecond, seconds } = route.steady;
  const steady = [];
  const intervalMs = 1_000 / perSecond;
  const started = Date.now();
  for (let i = 0; i < perSecond * seconds; i++) {
    const due = started + i * intervalMs;
    if (due > Date.now()) await sleep(due - Date.now());
    steady.push(send());
  }
  phases.push({ label: `steady  ${perSecond}/s for ${seconds} s`, responses: await Promise.all(steady) });

  const all = phases.flatMap((p) => p.responses);
  return {
    route,
    phases,
    allowed: all.filter((r) => r.status < 400).length,
    refused: all.filter((r) => r.status === 429).length,
    unexpected: all.filter((r) => r.status >= 400 && r.status !== 429),
    sample200: all.find((r) => r.status < 400),
    sample429: all.find((r) => r.status === 429),
  };
}

/** One HTTP request with node:http, keeping the raw headers as sent. */
function request(port, method, path, body, extraHeaders = {}) {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent,
        headers: { ...extraHeaders, ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }) },
      },
      (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            method,
            path,
            status: res.statusCode,
            statusMessage: res.statusMessage,
            httpVersion: res.httpVersion,
            rawHeaders: res.rawHeaders,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

function report(results, expectedHeaders) {
  const problems = [];
  for (const { route, phases, allowed, refused, unexpected } of results) {
    console.log(`${route.method.padEnd(4)} ${route.path}   ${route.policy}`);
    for (const { label, responses } of phases) {
      const ok = responses.filter((r) => r.status < 400).length;
      const tooMany = responses.filter((r) => r.status === 429).length;
      console.log(`  ${label.padEnd(22)} allowed ${String(ok).padStart(3)}   refused (429) ${String(tooMany).padStart(3)}`);
    }
    console.log(`  ${'total'.padEnd(22)} allowed ${String(allowed).padStart(3)}   refused (429) ${String(refused).padStart(3)}\n`);
    if (refused === 0) problems.push(`${route.method} ${route.path}: no request was refused with 429`);
    if (allowed === 0) problems.push(`${route.method} ${route.path}: no request was allowed`);
    for (const r of unexpected.slice(0, 3)) problems.push(`${route.method} ${route.path}: unexpected ${r.status} ${r.body}`);
  }

  const ok = results.map((r) => r.sample200).find(Boolean);
  const refusal = results
    .map((r) => r.sample429)
    .reverse()
    .find(Boolean);
  if (ok) {
    printResponse('a 200', ok);
    for (const name of expectedHeaders.allowed) if (ok.headers[name] === undefined) problems.push(`the 200 has no ${name} header`);
  }
  if (refusal) {
    printResponse('a 429', refusal);
    for (const name of expectedHeaders.refusal) {
      if (refusal.headers[name] === undefined) problems.push(`the 429 has no ${name} header`);
    }
    if (!(Number(refusal.headers['retry-after']) >= 1)) problems.push(`the 429's Retry-After is not a positive number of seconds: ${refusal.headers['retry-after']}`);
  }

  if (problems.length > 0) {
    console.error(`demo FAILED:\n  ${problems.join('\n  ')}`);
    return 1;
  }
  console.log(
    `demo passed: both routes answered 429 once over their limits; the 429 had ${expectedHeaders.refusal.join(', ')}${expectedHeaders.allowed.length > 0 ? `, the 200 ${expectedHeaders.allowed.join(', ')}` : ''}.\n`,
  );
  return 0;
}

function printResponse(what, response) {
  console.log(`Response headers of ${what} (${response.method} ${response.path}):`);
  console.log(`  HTTP/${response.httpVersion} ${response.status} ${response.statusMessage}`);
  for (let i = 0; i < response.rawHeaders.length; i += 2) console.log(`  ${response.rawHeaders[i]}: ${response.rawHeaders[i + 1]}`);
  console.log(`  body: ${response.body}\n`);
}
