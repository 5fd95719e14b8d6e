import { holdFor } from './hold.js';

describe('holdFor, the gate’s delay hold', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('resolves once delayMs has passed, not before', async () => {
    let held = true;
    const hold = holdFor(1_000).then(() => (held = false));
    await jest.advanceTimersByTimeAsync(999);
    expect(held).toBe(true);
    await jest.advanceTimersByTimeAsync(1);
    await hold;
    expect(held).toBe(false);
  });

  it('stops waiting as soon as the request is aborted, and leaves no timer behind', async () => {
    const aborting = new AbortController();
    let held = true;
    const hold = holdFor(60_000, aborting.signal).then(() => (held = false));
    await jest.advanceTimersByTimeAsync(10);
    aborting.abort();
    await hold;
    expect(held).toBe(false);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('does not wait at all for a request aborted before the hold', async () => {
    const aborting = new AbortController();
    aborting.abort();
    await holdFor(60_000, aborting.signal);
    expect(jest.getTimerCount()).toBe(0);
  });
});
