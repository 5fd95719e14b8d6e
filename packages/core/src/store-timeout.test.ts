import { type RateKitError, RateKitOptionError } from './errors.js';
import { DEFAULT_STORE_TIMEOUT_MS, resolveStoreTimeoutMs, storeCallBound, withStoreTimeout } from './store-timeout.js';

describe('resolveStoreTimeoutMs', () => {
  it.each([
    ['undefined: the default', undefined, DEFAULT_STORE_TIMEOUT_MS],
    ['a positive number of ms', 250, 250],
    ['a fraction of a ms', 0.5, 0.5],
    ["the longest Node's timers hold", 2 ** 31 - 1, 2 ** 31 - 1],
    ['Infinity: no timeout', Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY],
  ])('accepts %s', (_name, value, expected) => {
    expect(resolveStoreTimeoutMs(value)).toBe(expected);
  });

  it.each([
    ['0', 0, 'a positive finite number of milliseconds'],
    ['a negative number', -1, 'a positive finite number of milliseconds'],
    ['NaN', Number.NaN, 'a positive finite number of milliseconds'],
    ['a string', '1000', 'a positive finite number of milliseconds'],
    ['2³¹ ms, which setTimeout would turn into 1 ms', 2 ** 31, 'at most 2147483647 ms'],
    ['1e21', 1e21, 'or Infinity for no timeout'],
  ])('refuses %s, naming the option and what it expects', (_name, value, expected) => {
    const refuse = () => resolveStoreTimeoutMs(value);
    expect(refuse).toThrow(RateKitOptionError);
    expect(refuse).toThrow(/storeTimeoutMs/);
    expect(refuse).toThrow(expected);
  });
});

describe('withStoreTimeout', () => {
  it('answers what the store answers in time', async () => {
    await expect(withStoreTimeout(Promise.resolve('ok'), 1_000, 'fake')).resolves.toBe('ok');
  });

  it("passes the store's own failure through", async () => {
    const failure = new Error('connection reset');
    await expect(withStoreTimeout(Promise.reject(failure), 1_000, 'fake')).rejects.toBe(failure);
  });

  it('rejects with ERR_RATEKIT_STORE naming the store when it does not answer in time', async () => {
    const never = new Promise<never>(() => undefined);
    await expect(withStoreTimeout(never, 10, 'fake')).rejects.toMatchObject({ code: 'ERR_RATEKIT_STORE', message: expect.stringContaining('The fake store did not answer within 10 ms') });
  });

  it('with Infinity, is the promise itself: no timer', () => {
    const call = Promise.resolve(1);
    expect(withStoreTimeout(call, Number.POSITIVE_INFINITY, 'fake')).toBe(call);
  });
});

describe('storeCallBound: one timer for the calls of one limiter', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  /** A store call the test answers by hand. */
  function deferred<T>() {
    let resolve!: (value: T) => void;
    let reject!: (error: unknown) => void;
    const promise = new Promise<T>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  }
  const failures = (error: unknown) => `failed: ${(error as Error).message}`;

  it('times out each pending call at its own deadline, started 0, 40 and 80 ms apart, with at most one timer set', async () => {
    const bounded = storeCallBound(100, 'fake');
    const calls = [deferred<string>(), deferred<string>(), deferred<string>()];
    const seen: Array<[number, string]> = [];
    const started = Date.now();
    const watch = (i: number) => bounded(calls[i]!.promise, undefined, failures).then((outcome) => seen.push([Date.now() - started, `${i} ${outcome}`]));
    const done = [watch(0)];
    await jest.advanceTimersByTimeAsync(40);
    done.push(watch(1));
    await jest.advanceTimersByTimeAsync(40);
    done.push(watch(2));
    expect(jest.getTimerCount()).toBe(1);
    calls[1]!.resolve('answered');
    await jest.advanceTimersByTimeAsync(200);
    await Promise.all(done);
    expect(seen).toEqual([
      [80, '1 answered'],
      [100, '0 failed: [ratekit] The fake store did not answer within 100 ms'],
      [180, '2 failed: [ratekit] The fake store did not answer within 100 ms'],
    ]);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('clears its timer as soon as no call is pending, so it never holds the process open', async () => {
    const bounded = storeCallBound(1_000, 'fake');
    const a = deferred<number>();
    const b = deferred<number>();
    const both = Promise.all([bounded(a.promise, (n) => `doubled ${n * 2}`, failures), bounded(b.promise, (n) => `doubled ${n * 2}`, failures)]);
    expect(jest.getTimerCount()).toBe(1);
    b.resolve(2);
    await Promise.resolve();
    expect(jest.getTimerCount()).toBe(1);
    a.resolve(1);
    await expect(both).resolves.toEqual(['doubled 2', 'doubled 4']);
    expect(jest.getTimerCount()).toBe(0);
  });

  it("hands the store's own failure to onRejected, and ignores an answer that comes after the timeout", async () => {
    const bounded = storeCallBound(50, 'fake');
    const late = deferred<string>();
    const failing = bounded(Promise.reject(new Error('connection reset')), undefined, failures);
    await expect(failing).resolves.toBe('failed: connection reset');
    const timedOut = bounded(late.promise, undefined, failures);
    await jest.advanceTimersByTimeAsync(50);
    late.resolve('too late');
    await expect(timedOut).resolves.toBe('failed: [ratekit] The fake store did not answer within 50 ms');
  });

  it("with onTimeout, hands it the timeout and onRejected only the call's own failure", async () => {
    const bounded = storeCallBound(50, 'fake');
    const timeouts = (error: RateKitError) => `timed out: ${error.code}`;
    await expect(bounded(Promise.reject(new Error('connection reset')), undefined, failures, timeouts)).resolves.toBe('failed: connection reset');
    const late = deferred<string>();
    const timedOut = bounded(late.promise, undefined, failures, timeouts);
    await jest.advanceTimersByTimeAsync(50);
    late.reject(new Error('too late'));
    await expect(timedOut).resolves.toBe('timed out: ERR_RATEKIT_STORE');
    const thrower = () => {
      throw new Error('from onTimeout');
    };
    const rejected = bounded(new Promise<string>(() => undefined), undefined, failures, thrower);
    const settled = expect(rejected).rejects.toThrow('from onTimeout');
    await jest.advanceTimersByTimeAsync(50);
    await settled;
    expect(jest.getTimerCount()).toBe(0);
  });

  it('hands a thenable whose then throws to onRejected, and leaves no timer behind', async () => {
    const bounded = storeCallBound(50, 'fake');
    const broken = {
      then() {
        throw new Error('then exploded');
      },
    } as unknown as PromiseLike<string>;
    await expect(bounded(broken, undefined, failures)).resolves.toBe('failed: then exploded');
    expect(jest.getTimerCount()).toBe(0);
  });

  it('rejects with what onFulfilled or onRejected throws', async () => {
    const bounded = storeCallBound(50, 'fake');
    const boom = new Error('boom');
    const thrower = () => {
      throw boom;
    };
    await expect(bounded(Promise.resolve(1), thrower, failures)).rejects.toBe(boom);
    await expect(bounded(Promise.reject(new Error('x')), undefined, thrower)).rejects.toBe(boom);
  });

  it('keeps working across thousands of calls (the queue is compacted), and still times out the one left hanging', async () => {
    const bounded = storeCallBound(100, 'fake');
    const hanging = bounded(new Promise<string>(() => undefined), undefined, failures);
    const answered = await Promise.all(Array.from({ length: 5_000 }, (_, i) => bounded(Promise.resolve(i), undefined, failures)));
    expect(answered[4_999]).toBe(4_999);
    await jest.advanceTimersByTimeAsync(100);
    await expect(hanging).resolves.toBe('failed: [ratekit] The fake store did not answer within 100 ms');
    expect(jest.getTimerCount()).toBe(0);
  });

  it('with Infinity, sets no timer', async () => {
    const bounded = storeCallBound(Number.POSITIVE_INFINITY, 'fake');
    const pending = bounded(new Promise<string>(() => undefined), undefined, failures);
    expect(jest.getTimerCount()).toBe(0);
    await jest.advanceTimersByTimeAsync(10_000_000);
    const settled = await Promise.race([pending.then(() => 'settled'), Promise.resolve('pending')]);
    expect(settled).toBe('pending');
  });
});
