// The load side of the HTTP part: server processes, a probe per server, and
// one measured slice of autocannon load. The load generator is this process
// (autocannon's programmatic API); each server is its own child process.

import autocannon from 'autocannon';
import { startChild } from './child.mjs';
import { HOST } from './http-server.mjs';

/** bench/notes/method.md §2: 50 connections, one request in flight on each. */
export const CONNECTIONS = 50;
export const PIPELINING = 1;

/** autocannon's sampling tick, ms. It stops a run on a tick, so the tick bounds how far a slice overruns its length. */
const SAMPLE_MS = 100;

/**
 * Starts one server process: `node <script> <scenario>` (or `execPath`, e.g. Bun), listening on loopback.
 * @returns {Promise<{ port: number, url: string, pid: number, usage: () => Promise<number>, close: () => Promise<void> }>}
 *   `usage()`: the server's CPU time so far (user + system), µs
 */
export async function startServer(script, scenario, { execArgv = [], execPath, env, label = `${script} ${scenario}` } = {}) {
  const child = startChild(script, { args: [scenario], execArgv, execPath, env, label });
  try {
    const { port } = await child.request({ cmd: 'listen' });
    return {
      port,
      url: `http://${HOST}:${port}/`,
      pid: child.pid,
      usage: async () => (await child.request({ cmd: 'usage' })).cpuMicros,
      close: () => child.close(),
    };
  } catch (error) {
    await child.close();
    throw error;
  }
}

/**
 * One request with `fetch`, before any load: what a client sees (`headers`: added to the request).
 * @returns {Promise<{ status: number, body: string, headers: Record<string, string> }>}
 */
export async function probe(url, headers = {}) {
  const response = await fetch(url, { headers: { ...headers, connection: 'close' } });
  const body = await response.text();
  return { status: response.status, body, headers: Object.fromEntries(response.headers) };
}

/**
 * Loads one server for `ms` with autocannon and measures both sides.
 *
 * `requests` (optional): autocannon's `requests` (e.g. a `setupRequest` that varies a header);
 * `responseTimes` (optional): an array that receives every response's time, ms with a fraction
 * (autocannon's own percentiles are whole milliseconds); `amount` (optional): send that many
 * requests instead of loading for `ms`; `connections` (optional): instead of CONNECTIONS.
 *
 * @returns {Promise<object>} `rate` (responses per wall-clock second),
 *   `responses`, `ms`, `cpuMicrosPerResponse` (the server's CPU time per
 *   response), `serverCpuShare` / `loadCpuShare` (share of one core used by the
 *   server / by this process), `p50`/`p99` latency (ms), `statusCounts`,
 *   `errors`, `timeouts`
 */
export async function loadSlice(server, ms, { requests, responseTimes, amount, connections = CONNECTIONS } = {}) {
  const serverBefore = await server.usage();
  const loadBefore = process.cpuUsage();
  const started = performance.now();
  const instance = autocannon({
    url: server.url,
    connections,
    pipelining: PIPELINING,
    ...(amount === undefined ? { duration: ms / 1_000 } : { amount }),
    sampleInt: SAMPLE_MS,
    ...(requests === undefined ? {} : { requests }),
  });
  if (responseTimes !== undefined) instance.on('response', (_client, _status, _bytes, responseTime) => responseTimes.push(responseTime));
  const result = await instance;
  const elapsedMs = performance.now() - started;
  const load = process.cpuUsage(loadBefore);
  const serverMicros = (await server.usage()) - serverBefore;
  const responses = result.requests.total;
  const statusCounts = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, { count }]) => [code, count]));
  return {
    rate: responses / result.duration,
    responses,
    ms: result.duration * 1_000,
    cpuMicrosPerResponse: serverMicros / Math.max(responses, 1),
    serverCpuShare: serverMicros / 1_000 / elapsedMs,
    loadCpuShare: (load.user + load.system) / 1_000 / elapsedMs,
    p50: result.latency.p50,
    p99: result.latency.p99,
    statusCounts,
    errors: result.errors,
    timeouts: result.timeouts,
  };
}
