#!/usr/bin/env node
// Over-admission of @ratekit/synced as a function of the sync interval.
//
//   pnpm build && node packages/synced/bench/over-admission.mjs [--json]
//
// n nodes (synced stores, each with its own node-redis connections, in this process) each send
// r requests/s, spread evenly, against one shared fixed-window limit L per window W. For each
// (n, sync interval I) it measures the requests admitted in whole windows, all nodes together,
// and prints admitted / L next to the bound L + (n − 1) × r × I (see the package README).
//
// Redis: REDIS_URL, or else a private redis-server on a free loopback port (stopped at the end).
// Runs in about 25 s. The load driver mirrors runLoad in src/test-support.ts, which the package test uses.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLimiter } from '@ratekit/core';
import { createClient } from 'redis';
import { redisTransport, syncedStore } from '../dist/index.js';

const NODES = [2, 4];
const INTERVALS_MS = [10, 50, 100, 250];
const LIMIT = 100;
const WINDOW_MS = 1_000;
const RATE_PER_SECOND = 200;
const WINDOWS = 2;
const TICK_MS = 2;

const json = process.argv.includes('--json');

const redis = process.env.REDIS_URL ? { url: process.env.REDIS_URL, stop: async () => {} } : await startRedis();
const rows = [];
try {
  for (const nodes of NODES) {
    for (const intervalMs of INTERVALS_MS) rows.push(await measure(nodes, intervalMs));
  }
} finally {
  await redis.stop();
}

if (json) console.log(JSON.stringify({ limit: LIMIT, windowMs: WINDOW_MS, ratePerSecond: RATE_PER_SECOND, windows: WINDOWS, rows }, null, 2));
else printTable(rows);

async function measure(nodes, intervalMs) {
  const channel = `ratekit:bench:${process.pid}:${nodes}:${intervalMs}`;
  const clients = [];
  for (let i = 0; i < nodes; i++) {
    const client = createClient({ url: redis.url });
    client.on('error', () => {});
    clients.push(await client.connect());
  }
  // Delivery is timed on every message: publish time by message text (unique: node id + sequence), read by the receivers.
  const sentAt = new Map();
  const delivery = { maxMs: 0 };
  const stores = clients.map((client, i) => syncedStore({ transport: timed(redisTransport({ client, channel }), sentAt, delivery), nodeId: `n${i}`, syncIntervalMs: intervalMs }));
  await Promise.all(stores.map((s) => s.ready));
  try {
    const result = await runLoad(stores);
    const r = RATE_PER_SECOND / 1_000;
    const cap = nodes * LIMIT;
    // Staleness = interval + sync timer lateness (≤ stall) + delivery; the driver's catch-up adds r × stall; + 1 for whole requests.
    const measured = LIMIT + (nodes - 1) * (Math.ceil(r * (intervalMs + 2 * result.maxStallMs + delivery.maxMs)) + 1);
    return {
      nodes,
      intervalMs,
      admitted: result.admitted,
      sent: result.sent,
      maxRatio: Math.max(...result.admitted) / LIMIT,
      meanRatio: result.admitted.reduce((a, b) => a + b, 0) / result.admitted.length / LIMIT,
      boundRatio: Math.min(cap, LIMIT + (nodes - 1) * r * intervalMs) / LIMIT,
      measuredBoundRatio: Math.min(cap, measured) / LIMIT,
      stallMs: result.maxStallMs,
      deliveryMs: delivery.maxMs,
    };
  } finally {
    await Promise.all(stores.map((s) => s.dispose()));
    await Promise.all(clients.map((c) => c.close()));
  }
}

function timed(inner, sentAt, delivery) {
  return {
    get connected() {
      return inner.connected;
    },
    publish(message) {
      sentAt.set(message, Date.now());
      return inner.publish(message);
    },
    subscribe(onMessage) {
      return inner.subscribe((message) => {
        const at = sentAt.get(message);
        if (at !== undefined) delivery.maxMs = Math.max(delivery.maxMs, Date.now() - at);
        onMessage(message);
      });
    },
    close: () => inner.close(),
  };
}

/** Each node gets the requests due by each 2 ms tick (a late tick catches up); admissions are counted per window. */
async function runLoad(stores) {
  const limiters = stores.map((store) => createLimiter({ limits: { limit: LIMIT, windowMs: WINDOW_MS }, store }));
  const first = Math.ceil(Date.now() / WINDOW_MS) * WINDOW_MS;
  await new Promise((resolve) => setTimeout(resolve, first - Date.now()));
  const end = first + WINDOWS * WINDOW_MS;
  const admitted = new Array(WINDOWS).fill(0);
  const sentPerWindow = new Array(WINDOWS).fill(0);
  const sent = stores.map(() => 0);
  let maxStallMs = 0;
  let last = Date.now();
  await new Promise((resolve) => {
    const timer = setInterval(() => {
      const now = Date.now();
      maxStallMs = Math.max(maxStallMs, now - last - TICK_MS);
      last = now;
      for (let i = 0; i < limiters.length; i++) {
        const due = Math.floor((RATE_PER_SECOND * (Math.min(now, end) - first)) / 1_000);
        for (; sent[i] < due; sent[i]++) {
          const decision = limiters[i].consume('k');
          const w = Math.floor((decision.nowMs - first) / WINDOW_MS);
          if (w < 0 || w >= WINDOWS) continue;
          sentPerWindow[w]++;
          if (decision.allowed) admitted[w]++;
        }
      }
      if (now >= end) {
        clearInterval(timer);
        resolve();
      }
    }, TICK_MS);
  });
  return { admitted, sent: sentPerWindow, maxStallMs };
}

function printTable(rows) {
  console.log(`synced store over-admission: L = ${LIMIT} per ${WINDOW_MS} ms fixed window, ${RATE_PER_SECOND} requests/s per node, ${WINDOWS} windows per row`);
  console.log('bound = min(n × L, L + (n − 1) × r × I), r in requests/ms; admitted counts all nodes together');
  console.log('with delays = min(n × L, L + (n − 1) × (⌈r × (I + 2 × stall + delivery)⌉ + 1)), stall and delivery measured in the row\n');
  const header = ['nodes', 'sync interval', 'offered / window', 'admitted per window', 'max admitted / L', 'mean admitted / L', 'bound / L', 'with delays / L', 'max stall', 'max delivery'];
  const body = rows.map((row) => [
    String(row.nodes),
    `${row.intervalMs} ms`,
    String(row.nodes * RATE_PER_SECOND * (WINDOW_MS / 1_000)),
    row.admitted.join(', '),
    row.maxRatio.toFixed(2),
    row.meanRatio.toFixed(2),
    row.boundRatio.toFixed(2),
    row.measuredBoundRatio.toFixed(2),
    `${row.stallMs} ms`,
    `${row.deliveryMs} ms`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)));
  const line = (cells) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  console.log(line(header));
  console.log(`| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`);
  for (const r of body) console.log(line(r));
}

/** A private redis-server without persistence on a free loopback port, answering PING. */
async function startRedis() {
  const port = await new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
  const dir = mkdtempSync(join(tmpdir(), 'ratekit-bench-redis-'));
  const binary = process.env.REDIS_SERVER ?? 'redis-server';
  const child = spawn(binary, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
  const failed = new Promise((_, reject) => child.once('error', (error) => reject(new Error(`Could not start ${binary} (set REDIS_URL or install redis-server): ${error.message}`))));
  const url = `redis://127.0.0.1:${port}`;
  const ping = async () => {
    for (let attempt = 0; attempt < 200; attempt++) {
      const client = createClient({ url, socket: { reconnectStrategy: false } });
      client.on('error', () => {});
      try {
        await client.connect();
        await client.ping();
        await client.close();
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    }
    throw new Error(`${binary} did not answer on port ${port}`);
  };
  await Promise.race([ping(), failed]);
  return {
    url,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
