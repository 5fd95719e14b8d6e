import { RateKitOptionError } from './errors.js';
import { DEFAULT_STORE_TIMEOUT_MS, resolveStoreTimeoutMs, withStoreTimeout } from './store-timeout.js';

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
