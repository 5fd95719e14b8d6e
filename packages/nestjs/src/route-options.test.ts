import { mergeRateKitOptions } from './route-options.js';

// Levels, most specific first: the handler's @Throttle, the controller's @Throttle, the module's
// throttler, the module's `algorithm`.
const BUCKET = { algorithm: 'token-bucket', burst: 20 } as const;

describe('mergeRateKitOptions: one throttler on one route', () => {
  it('takes each option from the most specific level that gives it', () => {
    expect(mergeRateKitOptions([{ blockDurationMs: 5_000 }, { algorithm: 'gcra', burst: 3 }, { blockDurationMs: 60_000 }])).toEqual({
      algorithm: 'gcra',
      burst: 3,
      blockDurationMs: 5_000,
    });
  });

  it('a route that names another algorithm does not inherit the throttler’s burst', () => {
    expect(mergeRateKitOptions([{ algorithm: 'sliding-window' }, undefined, BUCKET])).toEqual({ algorithm: 'sliding-window', burst: undefined, blockDurationMs: undefined });
  });

  it('a controller that names another algorithm does not inherit it either, nor pass it to its routes', () => {
    expect(mergeRateKitOptions([undefined, { algorithm: 'fixed-window' }, BUCKET])).toMatchObject({ algorithm: 'fixed-window', burst: undefined });
    expect(mergeRateKitOptions([{ blockDurationMs: 1_000 }, { algorithm: 'fixed-window' }, BUCKET])).toMatchObject({ algorithm: 'fixed-window', burst: undefined });
  });

  it('a route that names the same algorithm again starts from its defaults too (burst = limit)', () => {
    expect(mergeRateKitOptions([{ algorithm: 'token-bucket' }, undefined, BUCKET])).toMatchObject({ algorithm: 'token-bucket', burst: undefined });
  });

  it('a route that does not name an algorithm keeps the algorithm and its burst', () => {
    expect(mergeRateKitOptions([{ blockDurationMs: 1_000 }, undefined, BUCKET])).toEqual({ ...BUCKET, blockDurationMs: 1_000 });
    expect(mergeRateKitOptions([undefined, undefined, BUCKET, { algorithm: 'fixed-window' }])).toEqual({ ...BUCKET, blockDurationMs: undefined });
  });

  it('a burst given more specifically than the algorithm applies to it', () => {
    expect(mergeRateKitOptions([{ burst: 50 }, undefined, BUCKET])).toMatchObject({ algorithm: 'token-bucket', burst: 50 });
    // The throttler's burst, on the module's algorithm.
    expect(mergeRateKitOptions([undefined, undefined, { burst: 5 }, { algorithm: 'gcra' }])).toMatchObject({ algorithm: 'gcra', burst: 5 });
  });

  it('blockDurationMs is inherited whatever the algorithm', () => {
    expect(mergeRateKitOptions([{ algorithm: 'sliding-window' }, undefined, { ...BUCKET, blockDurationMs: 60_000 }])).toEqual({
      algorithm: 'sliding-window',
      burst: undefined,
      blockDurationMs: 60_000,
    });
  });

  it('no level gives anything: nothing is set (the policy then defaults to a fixed window)', () => {
    expect(mergeRateKitOptions([undefined, undefined, {}, { algorithm: undefined }])).toEqual({ algorithm: undefined, burst: undefined, blockDurationMs: undefined });
  });
});
