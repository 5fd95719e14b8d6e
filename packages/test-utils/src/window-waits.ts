import fc from 'fast-check';

/**
 * The waits between two requests that test a window of `windowMs` hardest, for the differential suites that run
 * a drop-in against its incumbent on one fake clock: none, a wait within the window, one at its edge (a
 * millisecond before, on and after it; and around a second, where headers round), and one past it (up to three
 * windows).
 */
export function windowWaitArbitrary(windowMs: number): fc.Arbitrary<number> {
  return fc.oneof(fc.constant(0), fc.integer({ min: 1, max: windowMs }), fc.constantFrom(windowMs - 1, windowMs, windowMs + 1, 999, 1_000, 1_001), fc.integer({ min: windowMs, max: 3 * windowMs }));
}
