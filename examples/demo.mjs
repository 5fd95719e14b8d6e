// The demo: `pnpm demo [express|koa|fastify|nestjs|nestjs-fastify|all]` (default express).
// For each framework it starts that example API (examples/<framework>-api) as
// a separate process on a free loopback port, sends it real HTTP traffic (a burst, then a steady rate, on both
// routes), prints what was allowed and refused and one full set of response
// headers of a 200 and of a 429, then stops the server.
//
// Exits 0 when both routes refused some requests with 429 and correct
// headers; non-zero when the server failed or the limits did not show.
// The server imports the built packages (dist): run `pnpm demo` from the
// repository root, which builds first.
import { execFileSync, fork } from 'node:child_process';
import http from 'node:http';
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

/** The example app of each framework; all of them apply the same read and write policies. */
const FRAMEWORKS = { express: 'express-api', koa: 'koa-api', fastify: 'fastify-api', nestjs: 'nestjs-api', 'nestjs-fastify': 'nestjs-api' };
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
  if (choice !== 'all' && !(choice in FRAMEWORKS)) {
    console.error(`usage: pnpm demo [${Object.keys(FRAMEWORKS).join('|')}|all]  (got ${JSON.stringify(choice)})`);
    return 2;
  }
  const frameworks = choice === 'all' ? Object.keys(FRAMEWORKS) : [choice];
  let code = 0;
  try {
    for (const framework of frameworks) code = Math.max(code, await demo(framework));
  } finally {
    agent.destroy();
  }
  return code;
}

async function demo(framework) {
  build(framework);
  const server = await startServer(framework);
  const env = Object.entries(ENV[framework] ?? {})
    .map(([name, value]) => `, ${name}=${value}`)
    .join('');
  console.log(`ratekit demo: examples/${FRAMEWORKS[framework]} on http://127.0.0.1:${server.port} (server pid ${server.child.pid}${env})\n`);
  try {
    const results = await Promise.all(PLAN.map((route) => drive(server.port, route)));
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
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(3_000).then(() => child.kill('SIGKILL'))]);
}

/** Sends one route's burst, then its steady rate; returns the counts and one 200 and one 429. */
async function drive(port, route) {
  const send = () => request(port, route.method, route.path, route.method === 'POST' ? { name: 'demo' } : undefined);
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
function request(port, method, path, body) {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent,
        headers: payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
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
