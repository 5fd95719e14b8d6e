// The demo of examples/nextjs-middleware: `pnpm demo nextjs` from the repository root (examples/demo.mjs calls
// demoNext), and a step of `pnpm test`.
//
// 1. Starts a local Upstash REST endpoint (startUpstashRestServer of @ratekit/test-utils) in front of Redis:
//    REDIS_URL, else the local one (127.0.0.1:6379), else a private redis-server it starts.
// 2. Runs `next build`, then `next start` on a free loopback port with UPSTASH_REDIS_REST_URL and
//    UPSTASH_REDIS_REST_TOKEN pointing at that endpoint, and RATELIMIT_PREFIX, a key prefix of this run.
// 3. Sends real HTTP traffic, each client naming itself with x-real-ip as Vercel's edge would:
//    - GET /api/time 8 times from one client: the proxy (5 per 10 s, @upstash/ratelimit's API, from @ratekit/upstash)
//      lets the first 5 through with X-RateLimit-*, and refuses the last 3 with 429, RateLimit, RateLimit-Policy,
//      X-RateLimit-* and Retry-After. Its windows end on a 10-second grid, and a burst a window's end splits lets
//      more through (the previous window's count, weighted, is rounded down; a split after the 6th lets the 7th
//      through): the burst starts where its window has BURST_MARGIN_MS left (askWithWindowMargin of
//      @ratekit/test-utils, each new try from a new client address);
//    - GET /api/time from a second client: 200 (the budget is per client);
//    - GET /api/hello 5 times from a third client: the route's own limit (@ratekit/fetch, 3 per 10 s) lets the
//      first 3 through with the draft-8 RateLimit fields and refuses the 5th with its 429, the proxy letting
//      all 5 through.
// 4. Prints what it saw and the headers of each kind of response, stops the server and the endpoint, removes
//    this run's keys, and resolves 0, or 1 on any mismatch.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { createRequire } from 'node:module';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { createClient } from 'redis';
import { tsImport } from 'tsx/esm/api';

const APP_DIR = fileURLToPath(new URL('.', import.meta.url));
const NEXT_BIN = createRequire(import.meta.url).resolve('next/dist/bin/next');
const STARTUP_TIMEOUT_MS = 60_000;
/** Documentation addresses (RFC 5737), one per client of the demo; the burst's are 198.51.100.10, .11, … (one per try). */
const CLIENTS = { proxyStem: '198.51.100.1', other: '203.0.113.11', route: '203.0.113.20' };
/** What the proxy's burst needs of its window: 8 requests in a row take tens of ms on a loaded machine; 3 s is the margin. */
const BURST_MARGIN_MS = 3_000;

/** Runs the demo; resolves with the exit code (0: every check passed). */
export async function demoNext() {
  const started = Date.now();
  const prefix = `ratekit-example-nextjs:${randomUUID()}`;
  // @ratekit/test-utils is TypeScript (no build): tsx loads it.
  const { askWithWindowMargin, startRedis, startUpstashRestServer } = await tsImport('@ratekit/test-utils', import.meta.url);
  const { redis, privateServer } = await connectRedis(startRedis);
  const rest = await startUpstashRestServer({ sendCommand: (args) => redis.sendCommand(args) });
  const env = {
    ...process.env,
    NEXT_TELEMETRY_DISABLED: '1',
    UPSTASH_REDIS_REST_URL: rest.url,
    UPSTASH_REDIS_REST_TOKEN: rest.token,
    RATELIMIT_PREFIX: prefix,
  };
  let server;
  try {
    await run('next build', [NEXT_BIN, 'build'], env);
    const port = await freePort();
    server = await startNext(port, env);
    console.log(`ratekit demo: examples/nextjs-middleware (next start) on http://127.0.0.1:${port} (server pid ${server.child.pid}), Redis through ${rest.url}\n`);
    const problems = await drive(port, askWithWindowMargin);
    const commands = rest.commands.map((command) => command[0].toUpperCase());
    console.log(`The Upstash REST endpoint answered ${rest.requests()} requests (${count(commands)}).\n`);
    if (!commands.some((name) => name.startsWith('EVAL'))) problems.push('no script reached Redis through the Upstash REST endpoint');
    if (problems.length > 0) {
      console.error(`demo FAILED:\n  ${problems.join('\n  ')}`);
      return 1;
    }
    console.log(`demo passed (${((Date.now() - started) / 1000).toFixed(1)} s): the proxy refused /api/time over 5 per 10 s, the route /api/hello over 3 per 10 s, each 429 with its headers.\n`);
    return 0;
  } finally {
    if (server !== undefined) await stopServer(server.child);
    await rest.close();
    for await (const keys of redis.scanIterator({ MATCH: `${prefix}*`, COUNT: 100 })) if (keys.length > 0) await redis.del(keys);
    await redis.quit();
    await privateServer?.stop();
  }
}

/**
 * The Redis behind the REST endpoint: REDIS_URL, else the local one (127.0.0.1:6379), else, when none answers
 * there, a private `redis-server` (startRedis of @ratekit/test-utils: a free port, no persistence).
 */
async function connectRedis(startRedis) {
  const connect = (url) => createClient({ url, socket: { reconnectStrategy: false, connectTimeout: 5_000 } }).connect();
  if (process.env.REDIS_URL !== undefined) return { redis: await connect(process.env.REDIS_URL) };
  try {
    return { redis: await connect('redis://127.0.0.1:6379') };
  } catch (error) {
    console.log(`No Redis at 127.0.0.1:6379 (${error.message}): starting a private redis-server.\n`);
    const privateServer = await startRedis();
    return { redis: await connect(privateServer.url), privateServer };
  }
}

/** Sends the traffic and checks it; returns the problems found (none: passed). */
async function drive(port, askWithWindowMargin) {
  const problems = [];
  const get = (path, ip) => request(port, path, { 'x-real-ip': ip });

  // The proxy alone: 8 requests in a row from one client, the first where its window has BURST_MARGIN_MS left.
  // X-RateLimit-Reset is the window's end in whole seconds, and the window ends on a whole 10 s: the end exactly.
  // A response without it (a failure the checks below report) is taken as it is.
  const askProxy = async (ip) => {
    const response = await get('/api/time', ip);
    const reset = response.headers['x-ratelimit-reset'];
    return { response, reset: reset === undefined ? Infinity : Number(reset) * 1_000 };
  };
  const { identifier: proxyClient, first } = await askWithWindowMargin(askProxy, BURST_MARGIN_MS, CLIENTS.proxyStem);
  const time = [first.response];
  for (let i = 1; i < 8; i++) time.push(await get('/api/time', proxyClient));
  const other = await get('/api/time', CLIENTS.other);
  console.log(`GET /api/time   proxy: sliding window, 5 per 10 s per client (the @upstash/ratelimit API, from @ratekit/upstash)`);
  console.log(`  client ${proxyClient}, 8 in a row   ${statuses(time)}`);
  console.log(`  client ${CLIENTS.other}, then          ${other.status}\n`);
  time.slice(0, 5).forEach((r, i) => {
    if (r.status !== 200) problems.push(`GET /api/time #${i + 1}: ${r.status}, expected 200 (within the proxy's 5)`);
    for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
      if (r.headers[name] === undefined) problems.push(`GET /api/time #${i + 1}: no ${name} header`);
    }
  });
  if (time[0].headers['x-ratelimit-limit'] !== '5') problems.push(`GET /api/time #1: X-RateLimit-Limit ${time[0].headers['x-ratelimit-limit']}, expected 5`);
  if (time[0].headers['x-ratelimit-remaining'] !== '4') problems.push(`GET /api/time #1: X-RateLimit-Remaining ${time[0].headers['x-ratelimit-remaining']}, expected 4`);
  time.slice(5).forEach((r, i) => {
    if (r.status !== 429) problems.push(`GET /api/time #${i + 6}: ${r.status}, expected 429 (over the proxy's 5)`);
  });
  const proxyRefusal = time.find((r) => r.status === 429);
  if (proxyRefusal !== undefined) problems.push(...checkProxyRefusal(proxyRefusal));
  if (other.status !== 200) problems.push(`GET /api/time from a second client: ${other.status}, expected 200 (its own budget)`);

  // The route's own limit, under the proxy's: 5 requests in a row from a third client.
  const hello = [];
  for (let i = 0; i < 5; i++) hello.push(await get('/api/hello', CLIENTS.route));
  console.log(`GET /api/hello  route handler: sliding window, 3 per 10 s per client (@ratekit/fetch), under the proxy's 5`);
  console.log(`  client ${CLIENTS.route}, 5 in a row   ${statuses(hello)}\n`);
  hello.slice(0, 3).forEach((r, i) => {
    if (r.status !== 200) problems.push(`GET /api/hello #${i + 1}: ${r.status}, expected 200 (within the route's 3)`);
    if (!/^"hello";\s*r=\d+;\s*t=\d+$/.test(r.headers.ratelimit ?? '')) problems.push(`GET /api/hello #${i + 1}: RateLimit ${JSON.stringify(r.headers.ratelimit)}, expected "hello";r=…;t=…`);
    if (r.headers['x-ratelimit-limit'] !== '5') problems.push(`GET /api/hello #${i + 1}: X-RateLimit-Limit ${r.headers['x-ratelimit-limit']} (the proxy's), expected 5`);
  });
  const routeRefusal = hello[4];
  if (routeRefusal.status !== 429) problems.push(`GET /api/hello #5: ${routeRefusal.status}, expected 429 (over the route's 3)`);
  else problems.push(...checkRouteRefusal(routeRefusal));

  printResponse('a 200 of /api/hello (the route and the proxy let it through)', hello[0]);
  if (proxyRefusal !== undefined) printResponse('a 429 of the proxy', proxyRefusal);
  printResponse('a 429 of the route handler', routeRefusal);
  return problems;
}

function checkProxyRefusal(r) {
  const problems = [];
  const where = 'the proxy’s 429';
  if (!/^limit=5, remaining=0, reset=\d+$/.test(r.headers.ratelimit ?? '')) problems.push(`${where}: RateLimit ${JSON.stringify(r.headers.ratelimit)}, expected limit=5, remaining=0, reset=…`);
  if (r.headers['ratelimit-policy'] !== '5;w=10') problems.push(`${where}: RateLimit-Policy ${JSON.stringify(r.headers['ratelimit-policy'])}, expected 5;w=10`);
  if (r.headers['x-ratelimit-remaining'] !== '0') problems.push(`${where}: X-RateLimit-Remaining ${r.headers['x-ratelimit-remaining']}, expected 0`);
  const retryAfter = Number(r.headers['retry-after']);
  if (!(retryAfter >= 1 && retryAfter <= 10)) problems.push(`${where}: Retry-After ${JSON.stringify(r.headers['retry-after'])}, expected 1 to 10 seconds`);
  if (!r.body.includes('Too many requests')) problems.push(`${where}: body ${r.body}`);
  return problems;
}

function checkRouteRefusal(r) {
  const problems = [];
  const where = 'the route’s 429';
  if (!/^"hello";\s*r=0;\s*t=\d+$/.test(r.headers.ratelimit ?? '')) problems.push(`${where}: RateLimit ${JSON.stringify(r.headers.ratelimit)}, expected "hello";r=0;t=…`);
  if (!/^"hello";\s*q=3;\s*w=10(;|$)/.test(r.headers['ratelimit-policy'] ?? ''))
    problems.push(`${where}: RateLimit-Policy ${JSON.stringify(r.headers['ratelimit-policy'])}, expected "hello";q=3;w=10`);
  const retryAfter = Number(r.headers['retry-after']);
  // A sliding-window counter weighs the previous window's count, so the wait may reach into the next window.
  if (!(retryAfter >= 1 && retryAfter <= 20)) problems.push(`${where}: Retry-After ${JSON.stringify(r.headers['retry-after'])}, expected 1 to 20 seconds`);
  return problems;
}

/** Runs a Node.js script (next's CLI) in the app's folder to its end; rejects unless it exits 0. */
function run(label, args, env) {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(process.execPath, args, { cwd: APP_DIR, env, stdio: ['ignore', 'inherit', 'inherit'] });
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (code === 0) {
        console.log(`${label}: done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
        resolve();
      } else reject(new Error(`${label} failed (code ${code}, signal ${signal})`));
    });
  });
}

/** Starts `next start` on the port, in a process group of its own; resolves once it answers HTTP (GET /, outside the proxy's matcher). */
async function startNext(port, env) {
  const child = spawn(process.execPath, [NEXT_BIN, 'start', '--port', String(port), '--hostname', '127.0.0.1'], { cwd: APP_DIR, env, stdio: ['ignore', 'pipe', 'inherit'], detached: true });
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += chunk;
  });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(`exited (code ${code}, signal ${signal})`)));
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  for (;;) {
    const answer = await Promise.race([exited, request(port, '/').catch(() => undefined)]);
    if (typeof answer === 'string') throw new Error(`next start ${answer} before answering: ${output.trim()}`);
    if (answer !== undefined) return { child };
    if (Date.now() > deadline) {
      await stopServer(child);
      throw new Error(`next start did not answer within ${STARTUP_TIMEOUT_MS / 1000} s: ${output.trim()}`);
    }
    await sleep(100);
  }
}

async function stopServer(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const kill = (signal) => {
    try {
      process.kill(-child.pid, signal);
    } catch {
      child.kill(signal);
    }
  };
  kill('SIGTERM');
  await Promise.race([exited, sleep(5_000).then(() => kill('SIGKILL'))]);
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

/** One GET with node:http (no keep-alive), keeping the raw headers as sent. */
function request(port, path, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'GET', path, headers, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
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
    });
    req.on('error', reject);
    req.end();
  });
}

function statuses(responses) {
  return responses.map((r) => r.status).join(' ');
}

function count(names) {
  const counts = new Map();
  for (const name of names) counts.set(name, (counts.get(name) ?? 0) + 1);
  return [...counts].map(([name, n]) => `${n} ${name}`).join(', ');
}

function printResponse(what, response) {
  console.log(`Response headers of ${what} (GET ${response.path}):`);
  console.log(`  HTTP/${response.httpVersion} ${response.status} ${response.statusMessage}`);
  for (let i = 0; i < response.rawHeaders.length; i += 2) console.log(`  ${response.rawHeaders[i]}: ${response.rawHeaders[i + 1]}`);
  console.log(`  body: ${response.body}\n`);
}
