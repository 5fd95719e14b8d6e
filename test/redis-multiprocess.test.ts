import type { ChildProcess } from 'node:child_process';
import type { LimitOptions } from '@ratekit/core';
import { describeWithService, freshNamespace, parseClusterNodes, redisClusterService, redisService, type RunningServer, type ServiceDefinition } from '@ratekit/test-utils';
import { forkTypeScript } from './fork-typescript';

/**
 * Several app servers, one budget: 4 worker processes (2 on node-redis, 2 on
 * ioredis) share one Redis and fire 1,000 concurrent requests between them at
 * a limit of 100. Exactly 100 must pass, whatever the algorithm: on a single
 * Redis, and on a 3-master Redis Cluster through the clients' cluster APIs.
 *
 * The workers run the TypeScript sources through tsx (`--import tsx`), which
 * maps @ratekit/* with the root tsconfig.json paths, as jest does: no build
 * step, and no stale dist/ can be tested by mistake.
 */
const WORKERS = 4;
const REQUESTS = 1_000;
const LIMIT = 100;
const HOUR = 3_600_000;

interface Result {
  admitted: number;
  refused: number;
}

class Worker {
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (r: Result) => void; reject: (e: Error) => void }>();
  readonly ready: Promise<void>;
  private readonly child: ChildProcess;

  /** `redis`: REDIS_URL or RATEKIT_CLUSTER_NODES for the worker (see the worker's header). */
  constructor(redis: Record<string, string>, client: 'node-redis' | 'ioredis') {
    const env: NodeJS.ProcessEnv = { ...process.env, RATEKIT_CLIENT: client, ...redis };
    if (redis.RATEKIT_CLUSTER_NODES !== undefined) delete env.REDIS_URL;
    this.child = forkTypeScript('redis-multiprocess.worker.ts', env);
    this.ready = new Promise((resolveReady, rejectReady) => {
      this.child.on('message', (message: { type: string; id?: number; admitted?: number; refused?: number; message?: string }) => {
        if (message.type === 'ready') resolveReady();
        else if (message.type === 'result') {
          this.pending.get(message.id!)?.resolve({ admitted: message.admitted!, refused: message.refused! });
          this.pending.delete(message.id!);
        } else if (message.type === 'error') {
          const error = new Error(`worker (${client}): ${message.message}`);
          rejectReady(error);
          for (const p of this.pending.values()) p.reject(error);
          this.pending.clear();
        }
      });
      this.child.once('exit', (code) => rejectReady(new Error(`worker (${client}) exited with code ${code} before it was ready`)));
    });
  }

  run(namespace: string, key: string, requests: number, limits: LimitOptions[]): Promise<Result> {
    const id = this.nextId++;
    return new Promise((resolveRun, rejectRun) => {
      this.pending.set(id, { resolve: resolveRun, reject: rejectRun });
      this.child.send({ type: 'run', id, namespace, key, requests, limits });
    });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((done) => this.child.once('exit', done));
    this.child.send({ type: 'exit' });
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  }
}

function describeFourProcesses(service: ServiceDefinition, title: string, workerEnv: (server: RunningServer) => Record<string, string>): void {
  describeWithService(service, title, (server) => {
    let workers: Worker[] = [];

    beforeAll(async () => {
      workers = Array.from({ length: WORKERS }, (_, i) => new Worker(workerEnv(server()), i % 2 === 0 ? 'node-redis' : 'ioredis'));
      await Promise.all(workers.map((w) => w.ready));
    }, 60_000);

    afterAll(async () => {
      await Promise.all(workers.map((w) => w.stop()));
    }, 30_000);

    const scenarios: Array<[string, LimitOptions[]]> = [
      ['fixed-window', [{ algorithm: 'fixed-window', limit: LIMIT, windowMs: HOUR }]],
      ['sliding-window', [{ algorithm: 'sliding-window', limit: LIMIT, windowMs: HOUR }]],
      ['sliding-log', [{ algorithm: 'sliding-log', limit: LIMIT, windowMs: HOUR }]],
      ['token-bucket', [{ algorithm: 'token-bucket', limit: LIMIT, windowMs: HOUR }]],
      ['gcra', [{ algorithm: 'gcra', limit: LIMIT, windowMs: HOUR }]],
      ['delay (burst 100, no delay allowed)', [{ algorithm: 'delay', limit: LIMIT, windowMs: HOUR, burst: LIMIT, maxDelayMs: 0 }]],
      [
        'a two-limit policy (gcra 100/h and fixed window 150/h)',
        [
          { algorithm: 'gcra', limit: LIMIT, windowMs: HOUR, name: 'hourly' },
          { algorithm: 'fixed-window', limit: 150, windowMs: HOUR, name: 'ceiling' },
        ],
      ],
    ];

    it.each(scenarios)(
      `%s: ${REQUESTS} concurrent requests from ${WORKERS} processes at a limit of ${LIMIT} → exactly ${LIMIT} admitted`,
      async (_, limits) => {
        const namespace = freshNamespace('multiprocess');
        const results = await Promise.all(workers.map((w) => w.run(namespace, 'shared-client', REQUESTS / WORKERS, limits)));
        const admitted = results.reduce((sum, r) => sum + r.admitted, 0);
        const refused = results.reduce((sum, r) => sum + r.refused, 0);
        expect({ admitted, refused }).toEqual({ admitted: LIMIT, refused: REQUESTS - LIMIT });
      },
      30_000,
    );
  });
}

describeFourProcesses(redisService, 'four processes sharing one Redis', (server) => ({ REDIS_URL: server.url }));

describeFourProcesses(redisClusterService, 'four processes sharing one Redis Cluster (3 masters)', (server) => ({
  RATEKIT_CLUSTER_NODES: JSON.stringify(parseClusterNodes(server.url)),
}));
