import cluster from 'node:cluster';
import * as rlfCluster from 'rate-limiter-flexible';
import { _resetClusterMasterForTests, CLUSTER_CHANNEL, RateLimiterCluster, RateLimiterClusterMaster, RateLimiterClusterMasterPM2 } from './cluster.js';
import { RateLimiterRes } from './rate-limiter-res.js';

/**
 * A fake cluster: messages travel as over IPC (serialized, asynchronously)
 * between this process's worker side (`process.send` / `process.on`) and
 * whichever master the test routes them to (ours or rlf's, both listening
 * with `cluster.on('message')`).
 */
type MasterHandler = (worker: { send(msg: unknown, cb?: (err: unknown) => void): void }, msg: unknown) => void;
const masters: MasterHandler[] = [];
const workerListeners: Array<(msg: unknown) => void> = [];
let route: MasterHandler | null = null;
const sent: unknown[] = [];
const ipc = (msg: unknown) => JSON.parse(JSON.stringify(msg)) as unknown;
const workerHandle = {
  send(msg: unknown, cb?: (err: unknown) => void) {
    const copy = ipc(msg);
    void Promise.resolve().then(() => workerListeners.forEach((listener) => listener(copy)));
    cb?.(null);
  },
};
const originalOn = process.on.bind(process);
const originalSend = process.send;

beforeAll(() => {
  jest.spyOn(cluster, 'on').mockImplementation(((event: string, handler: MasterHandler) => {
    if (event === 'message') masters.push(handler);
    return cluster;
  }) as never);
  process.on = ((event: string, listener: (msg: unknown) => void) => {
    if (event === 'message') workerListeners.push(listener);
    else originalOn(event as never, listener as never);
    return process;
  }) as typeof process.on;
  process.send = ((msg: unknown) => {
    sent.push(msg);
    const copy = ipc(msg);
    const target = route;
    if (target) void Promise.resolve().then(() => target(workerHandle, copy));
    return true;
  }) as typeof process.send;
});

afterAll(() => {
  process.on = originalOn;
  process.send = originalSend;
  jest.restoreAllMocks();
});

describe('RateLimiterCluster and RateLimiterClusterMaster', () => {
  it("keeps rlf's class names (the worker class is RateLimiterClusterWorker)", () => {
    expect([RateLimiterCluster.name, RateLimiterClusterMaster.name, RateLimiterClusterMasterPM2.name]).toEqual([
      rlfCluster.RateLimiterCluster.name,
      rlfCluster.RateLimiterClusterMaster.name,
      rlfCluster.RateLimiterClusterMasterPM2.name,
    ]);
    expect(RateLimiterCluster.name).toBe('RateLimiterClusterWorker');
  });

  let master: RateLimiterClusterMaster;
  let ourMaster: MasterHandler;
  let rlfMaster: MasterHandler;

  beforeAll(() => {
    master = new RateLimiterClusterMaster();
    ourMaster = masters[0] as MasterHandler;
    new rlfCluster.RateLimiterClusterMaster();
    rlfMaster = masters[1] as MasterHandler;
  });

  beforeEach(() => {
    jest.useFakeTimers({ now: 1_700_000_000_000, doNotFake: ['queueMicrotask', 'nextTick', 'setImmediate'] });
    route = ourMaster;
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('has one master per process', () => {
    expect(new RateLimiterClusterMaster()).toBe(master);
    expect(masters).toHaveLength(2); // ours and rlf's, each registered once
  });

  describe('a worker limiter', () => {
    it('is counted by the master limiter of its keyPrefix', async () => {
      const a = new RateLimiterCluster({ keyPrefix: 'count', points: 2, duration: 5 });
      expect((await a.consume('k')).toJSON()).toEqual({ remainingPoints: 1, msBeforeNext: 5000, consumedPoints: 1, isFirstInDuration: true });
      await a.consume('k');
      const rejection: unknown = await a.consume('k').catch((r: unknown) => r);
      expect(rejection).toBeInstanceOf(RateLimiterRes);
      expect((rejection as RateLimiterRes).consumedPoints).toBe(3);
      expect((await master._rateLimiters.count?.get('k'))?.consumedPoints).toBe(3);
    });

    it('serves penalty, reward, block, get and delete through the master', async () => {
      const limiter = new RateLimiterCluster({ keyPrefix: 'calls', points: 2, duration: 5 });
      expect((await limiter.penalty('k', 2)).remainingPoints).toBe(0);
      expect((await limiter.reward('k')).remainingPoints).toBe(1);
      expect((await limiter.get('k'))?.consumedPoints).toBe(1);
      expect(await limiter.get('nobody')).toBeNull();
      expect((await limiter.block('b', 2)).msBeforeNext).toBe(2000);
      expect(await limiter.delete('k')).toBe(true);
      expect(await limiter.delete('k')).toBe(false);
    });

    it('passes customDuration to the master', async () => {
      const limiter = new RateLimiterCluster({ keyPrefix: 'custom', points: 2, duration: 5 });
      expect((await limiter.consume('k', 1, { customDuration: 1 })).msBeforeNext).toBe(1000);
    });

    it('sends rlf init options, and the requests in rlf shape', async () => {
      sent.length = 0;
      const limiter = new RateLimiterCluster({ keyPrefix: 'shape', points: 3, duration: 2 });
      await limiter.consume('k', 2, { customDuration: 1 });
      expect(sent[0]).toEqual({ channel: CLUSTER_CHANNEL, type: 'init', opts: { points: 3, duration: 2, blockDuration: 0, execEvenly: false, execEvenlyMinDelayMs: 667, keyPrefix: 'shape' } });
      expect(sent[1]).toEqual({ channel: CLUSTER_CHANNEL, keyPrefix: 'shape', func: 'consume', promiseId: expect.any(String), data: { key: 'k', arg: 2, opts: { customDuration: 1 } } });
    });

    it('rejects with rlf timeout Error when no master answers within timeoutMs', async () => {
      route = null;
      const limiter = new RateLimiterCluster({ keyPrefix: 'nomaster', points: 1, duration: 1, timeoutMs: 300 });
      const outcome = limiter.consume('k').catch((err: unknown) => err);
      await jest.advanceTimersByTimeAsync(299);
      await jest.advanceTimersByTimeAsync(1);
      expect(await outcome).toEqual(new Error('RateLimiterCluster timeout: no answer from master in time'));
    });

    it('defaults timeoutMs to 5000, and reads it as rlf does (Math.abs of parseInt)', () => {
      expect(new RateLimiterCluster({ keyPrefix: 'default-timeout', points: 1, duration: 1 }).timeoutMs).toBe(5000);
      expect(new RateLimiterCluster({ keyPrefix: 'parsed-timeout', points: 1, duration: 1, timeoutMs: -250.7 }).timeoutMs).toBe(250);
    });

    it('refuses a timeoutMs that reads as NaN, which would time every call out', () => {
      expect(() => new RateLimiterCluster({ keyPrefix: 'nan-timeout', points: 1, duration: 1, timeoutMs: 'soon' as never })).toThrow(
        expect.objectContaining({ code: 'ERR_RATEKIT_INVALID_OPTION', option: 'timeoutMs' }),
      );
    });

    it('waits for a master started after it', async () => {
      route = null;
      const limiter = new RateLimiterCluster({ keyPrefix: 'late', points: 1, duration: 1 });
      route = ourMaster;
      await jest.advanceTimersByTimeAsync(1000); // its next call asks the master again
      expect((await limiter.consume('k')).consumedPoints).toBe(1);
    });

    it('has no set, as rlf', () => {
      const limiter = new RateLimiterCluster({ keyPrefix: 'noset', points: 1, duration: 1 });
      expect(() => limiter.set('k', 1, 1)).toThrow("You have to implement the method 'set'!");
    });

    it('cannot be built outside a worker', () => {
      const send = process.send;
      process.send = undefined;
      try {
        expect(() => new RateLimiterCluster({ keyPrefix: 'x', points: 1, duration: 1 })).toThrow(/no IPC channel/);
      } finally {
        process.send = send;
      }
    });
  });

  describe('the master', () => {
    it('ignores an init whose options are not a limiter, instead of crashing the primary process', () => {
      const replies: unknown[] = [];
      expect(() => ourMaster({ send: (msg) => replies.push(msg) }, { channel: CLUSTER_CHANNEL, type: 'init', opts: { keyPrefix: 'bad', points: 'many', duration: 1 } })).not.toThrow();
      expect(replies).toEqual([]);
      expect(master._rateLimiters.bad).toBeUndefined();
    });

    it('ignores messages of other channels and unknown functions', async () => {
      const replies: unknown[] = [];
      const reply = { send: (msg: unknown) => replies.push(msg) };
      new RateLimiterCluster({ keyPrefix: 'ignored', points: 1, duration: 1 });
      await jest.advanceTimersByTimeAsync(0);
      ourMaster(reply, { channel: 'other', keyPrefix: 'ignored', func: 'consume', promiseId: '1', data: { key: 'k', arg: 1 } });
      ourMaster(reply, { channel: CLUSTER_CHANNEL, keyPrefix: 'ignored', func: 'set', promiseId: '2', data: { key: 'k', arg: 1 } });
      await jest.advanceTimersByTimeAsync(0);
      expect(replies).toEqual([]);
      expect(await master._rateLimiters.ignored?.get('k')).toBeNull();
    });
  });

  describe('with rate-limiter-flexible on the other side', () => {
    it('our worker is served by an rlf master', async () => {
      route = rlfMaster;
      const limiter = new RateLimiterCluster({ keyPrefix: 'rlf-master', points: 1, duration: 3 });
      expect((await limiter.consume('k')).toJSON()).toEqual({ remainingPoints: 0, msBeforeNext: 3000, consumedPoints: 1, isFirstInDuration: true });
      await expect(limiter.consume('k')).rejects.toBeInstanceOf(RateLimiterRes);
      expect(await limiter.get('nobody')).toBeNull();
      expect(await limiter.delete('k')).toBe(true);
    });

    it('an rlf worker is served by our master', async () => {
      const limiter = new rlfCluster.RateLimiterCluster({ keyPrefix: 'rlf-worker', points: 1, duration: 3 });
      const first = limiter.consume('k');
      await jest.advanceTimersByTimeAsync(30); // rlf's worker polls for the init answer every 30 ms
      expect((await first).consumedPoints).toBe(1);
      const second: unknown = await limiter.consume('k').catch((r: unknown) => r);
      expect((second as { consumedPoints: number }).consumedPoints).toBe(2);
      expect((await master._rateLimiters['rlf-worker']?.get('k'))?.consumedPoints).toBe(2);
    });
  });
});

describe('RateLimiterClusterMasterPM2', () => {
  it('is the process master, as rlf returns whichever master was created first', () => {
    const launchBus = jest.fn();
    expect(new RateLimiterClusterMasterPM2({ launchBus, sendDataToProcessId: jest.fn() })).toBe(new RateLimiterClusterMaster());
    expect(launchBus).not.toHaveBeenCalled();
  });

  it('keeps the error PM2 failed to launch its bus with, and serves nothing', () => {
    _resetClusterMasterForTests();
    const master = new RateLimiterClusterMasterPM2({ launchBus: (cb: (err: unknown) => void) => cb(new Error('no pm2 daemon')), sendDataToProcessId: jest.fn() });
    expect(master._launchError).toEqual(new Error('no pm2 daemon'));
  });

  it("serves PM2 processes over PM2's bus, answering each by its pm_id", async () => {
    jest.useFakeTimers({ now: 1_700_000_000_000, doNotFake: ['queueMicrotask', 'nextTick', 'setImmediate'] });
    _resetClusterMasterForTests();
    type Listener = (packet: { raw: unknown; process: { pm_id: number } }) => void;
    let onMessage: Listener | undefined;
    const sendDataToProcessId = jest.fn();
    new RateLimiterClusterMasterPM2({
      launchBus: (cb: (err: unknown, bus: { on(event: string, listener: Listener): void }) => void) => cb(null, { on: (_event, listener) => (onMessage = listener) }),
      sendDataToProcessId,
    });
    onMessage?.({ raw: { channel: CLUSTER_CHANNEL, type: 'init', opts: { keyPrefix: 'pm2', points: 1, duration: 10 } }, process: { pm_id: 3 } });
    expect(sendDataToProcessId).toHaveBeenLastCalledWith(3, { data: {}, topic: CLUSTER_CHANNEL, channel: CLUSTER_CHANNEL, type: 'init', keyPrefix: 'pm2' }, expect.any(Function));
    onMessage?.({ raw: { channel: CLUSTER_CHANNEL, keyPrefix: 'pm2', func: 'consume', promiseId: 'p1', data: { key: 'k', arg: 1, opts: {} } }, process: { pm_id: 4 } });
    await new Promise((resolve) => setImmediate(resolve));
    expect(sendDataToProcessId).toHaveBeenLastCalledWith(
      4,
      {
        channel: CLUSTER_CHANNEL,
        keyPrefix: 'pm2',
        promiseId: 'p1',
        type: 'resolve',
        topic: CLUSTER_CHANNEL,
        data: { remainingPoints: 0, msBeforeNext: 10000, consumedPoints: 1, isFirstInDuration: true },
      },
      expect.any(Function),
    );
    jest.useRealTimers();
  });
});
