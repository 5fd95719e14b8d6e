/**
 * RateLimiterCluster and RateLimiterClusterMaster: one in-memory count for
 * every worker of a `node:cluster` application, as rlf's
 * `lib/RateLimiterCluster.js`. The primary process creates one
 * RateLimiterClusterMaster; each worker's RateLimiterCluster sends its calls
 * to it over the cluster IPC channel and answers with what the master's
 * RateLimiterMemory (one per keyPrefix) answered. The counts are exact
 * because only the master counts.
 *
 * The messages are rlf's, on rlf's channel `'rate_limiter_flexible'`, so an
 * rlf master serves our workers and ours serves rlf's:
 *
 * - worker → master `{ channel, type: 'init', opts: { points, duration, blockDuration, execEvenly, execEvenlyMinDelayMs, keyPrefix } }`:
 *   the master creates the keyPrefix's limiter if it has none, and answers
 *   `{ channel, type: 'init', keyPrefix }`;
 * - worker → master `{ channel, keyPrefix, func, promiseId, data: { key, arg, opts } }` for
 *   consume, penalty, reward, block (arg: points or seconds), get and delete;
 * - master → worker `{ channel, keyPrefix, promiseId, type: 'resolve' | 'reject', data }`, `data` being
 *   null, a boolean, or the four RateLimiterRes fields.
 *
 * A worker call not answered within `timeoutMs` (default 5000) rejects with
 * `Error('RateLimiterCluster timeout: no answer from master in time')`, so
 * no request hangs on a missing master. Calls made before the master
 * acknowledged the worker's init wait for it (within the same timeout).
 * The worker has no `set` (rlf's master does not serve it).
 *
 * RateLimiterClusterMasterPM2 is the same master over PM2's message bus
 * (`pm2.launchBus`, `pm2.sendDataToProcessId`), as rlf's.
 *
 * @module
 */
import cluster from 'node:cluster';
import { RateKitOptionError } from '@ratekit/core';
import { RateLimiterAbstract } from './abstract.js';
import { RateLimiterMemory } from './memory.js';
import type { IRateLimiterClusterOptions, IRateLimiterOptions, RateLimiterCallOptions } from './options.js';
import { RateLimiterRes } from './rate-limiter-res.js';

/** rlf's IPC channel name: every message of this protocol carries it. */
export const CLUSTER_CHANNEL = 'rate_limiter_flexible';

/** Milliseconds a worker waits for the master's answer by default. */
export const DEFAULT_CLUSTER_TIMEOUT_MS = 5000;

/** A worker not yet acknowledged sends its init again at most this often, in milliseconds. */
const INIT_RETRY_MS = 1000;

const TIMEOUT_MESSAGE = 'RateLimiterCluster timeout: no answer from master in time';

type ServedFunc = 'consume' | 'penalty' | 'reward' | 'block' | 'get' | 'delete';

/** What a master answers: a limiter's result, or null / a boolean (get, delete). */
type AnswerData = null | boolean | { remainingPoints: number; msBeforeNext: number; consumedPoints: number; isFirstInDuration: boolean };

/** A worker's request to the master. */
interface RequestMessage {
  channel: typeof CLUSTER_CHANNEL;
  keyPrefix: string;
  func: ServedFunc;
  promiseId: string;
  data: { key: string | number; arg?: number; opts: RateLimiterCallOptions };
}

/** Anything the master can answer through (a cluster Worker, or PM2's process). */
interface Replier {
  send(message: unknown): void;
}

/** The one master of this process (rlf: creating a second one returns the first). */
let masterInstance: MasterCore | null = null;

/** What both masters share: the limiters by keyPrefix, and how a message is served. */
class MasterCore {
  /** The master's limiters by keyPrefix (rlf's field; its tests read it). */
  readonly _rateLimiters: Record<string, RateLimiterMemory> = {};

  /**
   * Creates the keyPrefix's limiter from a worker's options, unless it
   * exists; answers its keyPrefix, or undefined when the options are not a
   * limiter's (the worker then gets no answer and its calls time out: a
   * throw here would crash the primary process).
   */
  _init(opts: IRateLimiterOptions): string | undefined {
    try {
      const keyPrefix = opts.keyPrefix as string;
      if (!Object.prototype.hasOwnProperty.call(this._rateLimiters, keyPrefix)) this._rateLimiters[keyPrefix] = new RateLimiterMemory(opts);
      return keyPrefix;
    } catch {
      return undefined;
    }
  }

  /** Serves a request message; ignores what is not one, or names a keyPrefix no worker has initialised. */
  _serve(replier: Replier, msg: unknown): void {
    if (!isOnChannel(msg)) return;
    const request = msg as RequestMessage;
    if (!Object.prototype.hasOwnProperty.call(this._rateLimiters, request.keyPrefix)) return;
    const limiter = this._rateLimiters[request.keyPrefix] as RateLimiterMemory;
    const data = (request as { data?: RequestMessage['data'] }).data ?? ({} as RequestMessage['data']);
    const served: Record<ServedFunc, unknown[]> = {
      consume: [data.key, data.arg, data.opts],
      penalty: [data.key, data.arg, data.opts],
      reward: [data.key, data.arg, data.opts],
      block: [data.key, data.arg, data.opts],
      get: [data.key, data.opts],
      delete: [data.key, data.opts],
    };
    if (!Object.prototype.hasOwnProperty.call(served, request.func)) return;
    let promise: Promise<unknown>;
    try {
      promise = (limiter[request.func] as (...args: unknown[]) => Promise<unknown>).apply(limiter, served[request.func]);
    } catch (err) {
      promise = Promise.reject(err);
    }
    promise.then(
      (res) => replier.send(answer(request, 'resolve', res)),
      (rejection: unknown) => replier.send(answer(request, 'reject', rejection)),
    );
  }
}

/**
 * The master of a `node:cluster` application: create one in the primary
 * process, before or after forking. It counts for every worker's
 * RateLimiterCluster, one RateLimiterMemory per keyPrefix, created with the
 * options of the first worker limiter of that prefix. A second
 * `new RateLimiterClusterMaster()` returns the first (rlf).
 *
 * @example
 * ```ts
 * import cluster from 'node:cluster';
import { RateKitOptionError } from '@ratekit/core';
 * if (cluster.isPrimary) {
 *   new RateLimiterClusterMaster();
 *   cluster.fork();
 * } else {
 *   const limiter = new RateLimiterCluster({ keyPrefix: 'api', points: 10, duration: 1 });
 *   await limiter.consume(ip);
 * }
 * ```
 */
export class RateLimiterClusterMaster extends MasterCore {
  constructor() {
    super();
    if (masterInstance) return masterInstance;
    cluster.setMaxListeners(0);
    cluster.on('message', (worker: Replier, msg: unknown) => {
      // A worker that exited cannot be answered: the send's error goes to this callback, not to an 'error' event.
      const replier: Replier = { send: (message) => sendQuietly(worker, message) };
      if (isOnChannel(msg) && (msg as { type?: unknown }).type === 'init') {
        const keyPrefix = this._init((msg as { opts: IRateLimiterOptions }).opts);
        if (keyPrefix !== undefined) replier.send({ channel: CLUSTER_CHANNEL, type: 'init', keyPrefix });
      } else {
        this._serve(replier, msg);
      }
    });
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the process's one master (rlf: a second construction returns it)
    masterInstance = this;
  }
}

/** The part of PM2's API the PM2 master uses. */
interface Pm2Like {
  launchBus(callback: (err: unknown, bus: { on(event: 'process:msg', listener: (packet: Pm2Packet) => void): void }) => void): void;
  sendDataToProcessId(processId: number, message: Record<string, unknown>, callback: (err: unknown, res?: unknown) => void): void;
}

/** A message from a PM2 process, as PM2's bus delivers it. */
interface Pm2Packet {
  raw: unknown;
  process: { pm_id: number };
}

/**
 * The master over PM2's message bus, for applications PM2 runs in cluster
 * mode (rlf's RateLimiterClusterMasterPM2): pass the connected `pm2` module.
 * It shares the one master of the process with RateLimiterClusterMaster
 * (rlf: whichever is created first is returned by both).
 *
 * A send PM2 fails is dropped (the worker's call times out); rlf logs it.
 *
 * @example
 * ```ts
 * import pm2 from 'pm2';
 * pm2.connect(() => new RateLimiterClusterMasterPM2(pm2));
 * ```
 */
export class RateLimiterClusterMasterPM2 extends MasterCore {
  /** The error PM2's bus failed to launch with, if it did (then no worker is served, and their calls time out). */
  _launchError: unknown;

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- rlf types it so: the pm2 module, whatever its version's types
  constructor(pm2Module: any) {
    super();
    if (masterInstance) return masterInstance as RateLimiterClusterMasterPM2;
    const pm2 = pm2Module as Pm2Like;
    pm2.launchBus((err, bus) => {
      if (err) {
        this._launchError = err;
        return;
      }
      bus.on('process:msg', (packet) => {
        const msg = packet.raw;
        const send = (message: Record<string, unknown>): void => {
          const pm2Message = { ...message, topic: CLUSTER_CHANNEL, data: message.data === undefined ? {} : message.data };
          pm2.sendDataToProcessId(packet.process.pm_id, pm2Message, () => undefined);
        };
        if (isOnChannel(msg) && (msg as { type?: unknown }).type === 'init') {
          const keyPrefix = this._init((msg as { opts: IRateLimiterOptions }).opts);
          if (keyPrefix !== undefined) send({ data: {}, channel: CLUSTER_CHANNEL, type: 'init', keyPrefix });
        } else {
          this._serve({ send: (message) => send(message as Record<string, unknown>) }, msg);
        }
      });
    });
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the process's one master (rlf: a second construction returns it)
    masterInstance = this;
  }
}

/** A call waiting for the master's answer. */
interface PendingCall {
  resolve(value: unknown): void;
  reject(reason: unknown): void;
  timeoutId: ReturnType<typeof setTimeout>;
  /** The request, kept until the master has acknowledged the worker's init. */
  request: RequestMessage | null;
}

/** Every worker limiter of this process, served by the one 'message' listener. */
const workers = new Set<RateLimiterClusterWorker>();
let listening = false;
let nextPromiseId = 0;

/**
 * A worker's limiter: its calls are counted by the master's RateLimiterMemory
 * of the same keyPrefix (give each worker limiter its own keyPrefix). Takes
 * rlf's limiter options plus `timeoutMs` (milliseconds; default 5000; rlf
 * reads it as `Math.abs(parseInt(value))`).
 *
 * Resolves and rejects like RateLimiterMemory; rejects with
 * `Error('RateLimiterCluster timeout: no answer from master in time')` when
 * the master does not answer within `timeoutMs`.
 *
 * @throws {Error} rlf's option messages (points, duration, keyPrefix), or
 *   when the process has no IPC channel (not a cluster worker).
 * @throws {RateKitOptionError} when `timeoutMs` does not read as a number.
 */
class RateLimiterClusterWorker extends RateLimiterAbstract {
  _timeoutMs!: number;
  _initiated = false;
  /** When this limiter last sent its init, Unix ms: a call before the master's answer asks again at most once a second. */
  _initSentAtMs = 0;
  readonly _promises: Record<string, PendingCall> = {};

  constructor(opts: IRateLimiterClusterOptions = {} as IRateLimiterClusterOptions) {
    super(opts);
    this.timeoutMs = opts.timeoutMs as number;
    if (typeof process.send !== 'function') {
      throw new Error('RateLimiterCluster: this process has no IPC channel; create RateLimiterCluster in a node:cluster worker and RateLimiterClusterMaster in the primary');
    }
    listen();
    workers.add(this);
    this._sendInit();
  }

  /** Milliseconds to wait for the master's answer. */
  get timeoutMs(): number {
    return this._timeoutMs;
  }

  /**
   * rlf reads it as `Math.abs(parseInt(value))`; a value that reads as NaN
   * would time every call out at once (a NaN timer fires after 1 ms), so it
   * throws instead.
   * @throws {RateKitOptionError} (`ERR_RATEKIT_INVALID_OPTION`) when `timeoutMs` is not a number of milliseconds
   */
  set timeoutMs(value: number) {
    if (typeof value === 'undefined') {
      this._timeoutMs = DEFAULT_CLUSTER_TIMEOUT_MS;
      return;
    }
    const ms = Math.abs(parseInt(value as unknown as string, 10));
    if (Number.isNaN(ms)) throw new RateKitOptionError('timeoutMs', 'a number of milliseconds (read with parseInt, as rlf does)', value);
    this._timeoutMs = ms;
  }

  override consume(key: string | number, pointsToConsume = 1, options: RateLimiterCallOptions = {}): Promise<RateLimiterRes> {
    return this._call('consume', key, pointsToConsume, options) as Promise<RateLimiterRes>;
  }

  override penalty(key: string | number, points = 1, options: RateLimiterCallOptions = {}): Promise<RateLimiterRes> {
    return this._call('penalty', key, points, options) as Promise<RateLimiterRes>;
  }

  override reward(key: string | number, points = 1, options: RateLimiterCallOptions = {}): Promise<RateLimiterRes> {
    return this._call('reward', key, points, options) as Promise<RateLimiterRes>;
  }

  override block(key: string | number, secDuration: number, options: RateLimiterCallOptions = {}): Promise<RateLimiterRes> {
    return this._call('block', key, secDuration, options) as Promise<RateLimiterRes>;
  }

  override get(key: string | number, options: RateLimiterCallOptions = {}): Promise<RateLimiterRes | null> {
    return this._call('get', key, undefined, options) as Promise<RateLimiterRes | null>;
  }

  override delete(key: string | number, options: RateLimiterCallOptions = {}): Promise<boolean> {
    return this._call('delete', key, undefined, options) as Promise<boolean>;
  }

  /** Sends the options the master creates this keyPrefix's limiter with (rlf's `init`). */
  _sendInit(): void {
    const opts = {
      points: this.points,
      duration: this.duration,
      blockDuration: this.blockDuration,
      execEvenly: this.execEvenly,
      execEvenlyMinDelayMs: this.execEvenlyMinDelayMs,
      keyPrefix: this.keyPrefix,
    };
    this._initSentAtMs = Date.now();
    sendToMaster({ channel: CLUSTER_CHANNEL, type: 'init', opts });
  }

  /** Sends one call to the master, or keeps it until the master acknowledged this limiter. */
  _call(func: ServedFunc, key: string | number, arg: number | undefined, opts: RateLimiterCallOptions): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const promiseId = `${process.pid}.${++nextPromiseId}`;
      const data = func === 'get' || func === 'delete' ? { key, opts } : { key, arg, opts };
      const request: RequestMessage = { channel: CLUSTER_CHANNEL, keyPrefix: this.keyPrefix, func, promiseId, data };
      const timeoutId = setTimeout(() => {
        delete this._promises[promiseId];
        reject(new Error(TIMEOUT_MESSAGE));
      }, this.timeoutMs);
      this._promises[promiseId] = { resolve, reject, timeoutId, request: this._initiated ? null : request };
      if (this._initiated) {
        sendToMaster(request);
      } else if (Date.now() - this._initSentAtMs >= INIT_RETRY_MS) {
        // The master may have started after our init: ask again (it answers every init; creating the limiter is idempotent).
        this._sendInit();
      }
    });
  }

  /** Handles a message from the master addressed to this limiter's keyPrefix. */
  _receive(msg: Record<string, unknown>): void {
    if (msg.type === 'init') {
      if (this._initiated) return;
      this._initiated = true;
      for (const pending of Object.values(this._promises)) {
        if (pending.request === null) continue;
        const { request } = pending;
        pending.request = null;
        sendToMaster(request);
      }
      return;
    }
    const promiseId = msg.promiseId as string;
    if (!Object.prototype.hasOwnProperty.call(this._promises, promiseId)) return;
    const pending = this._promises[promiseId] as PendingCall;
    clearTimeout(pending.timeoutId);
    delete this._promises[promiseId];
    const res = resultOf(msg.data as AnswerData);
    if (msg.type === 'resolve') pending.resolve(res);
    else if (msg.type === 'reject') pending.reject(res);
    else pending.reject(new Error(`RateLimiterCluster: no such message type '${String(msg.type)}'`));
  }
}

/** Installs the process's one 'message' listener, which routes the master's answers to the worker limiters by keyPrefix. */
function listen(): void {
  if (listening) return;
  listening = true;
  process.on('message', (msg: unknown) => {
    if (!isOnChannel(msg)) return;
    const message = msg as Record<string, unknown>;
    for (const worker of workers) {
      if (worker.keyPrefix === message.keyPrefix) worker._receive(message);
    }
  });
}

function sendToMaster(message: unknown): void {
  (process.send as (message: unknown) => boolean)(message);
}

/** Sends to a worker; an error (the worker exited) is dropped: its calls have nobody to answer. */
function sendQuietly(worker: Replier, message: unknown): void {
  try {
    (worker.send as (message: unknown, callback: (err: unknown) => void) => void)(message, () => undefined);
  } catch {
    // The worker's channel closed synchronously: nothing to answer.
  }
}

function isOnChannel(msg: unknown): boolean {
  return typeof msg === 'object' && msg !== null && (msg as { channel?: unknown }).channel === CLUSTER_CHANNEL;
}

/** The master's answer message for a request (rlf's shape). */
function answer(request: RequestMessage, type: 'resolve' | 'reject', res: unknown): Record<string, unknown> {
  let data: AnswerData;
  if (res === null || res === true || res === false) {
    data = res;
  } else {
    const fields = (res ?? {}) as Partial<RateLimiterRes>;
    data = {
      remainingPoints: fields.remainingPoints as number,
      msBeforeNext: fields.msBeforeNext as number,
      consumedPoints: fields.consumedPoints as number,
      isFirstInDuration: fields.isFirstInDuration as boolean,
    };
  }
  return { channel: CLUSTER_CHANNEL, keyPrefix: request.keyPrefix, promiseId: request.promiseId, type, data };
}

/** A worker's result from the master's data: null or a boolean as is, else a RateLimiterRes. */
function resultOf(data: AnswerData): RateLimiterRes | boolean | null {
  if (data === null || data === true || data === false) return data;
  return new RateLimiterRes(data.remainingPoints, data.msBeforeNext, data.consumedPoints, data.isFirstInDuration);
}

/** For tests: forget the process's master, so the next `new RateLimiterClusterMaster()` makes a new one. */
export function _resetClusterMasterForTests(): void {
  masterInstance = null;
}

// rlf names the worker class RateLimiterClusterWorker and exports it as RateLimiterCluster: its `name` is rlf's.
export { RateLimiterClusterWorker as RateLimiterCluster };
