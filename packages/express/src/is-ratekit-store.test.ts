import { memoryStore } from '@ratekit/core';
import { isRateKitStore } from './is-ratekit-store.js';

describe('isRateKitStore', () => {
  it("is true for core's stores and anything with evaluate and resetKey", () => {
    expect(isRateKitStore(memoryStore())).toBe(true);
    expect(isRateKitStore({ evaluate: () => undefined, resetKey: () => undefined })).toBe(true);
  });

  it.each<[string, unknown]>([
    ['an express-rate-limit store', { increment: () => undefined, decrement: () => undefined, resetKey: () => undefined }],
    ['evaluate without resetKey', { evaluate: () => undefined }],
    ['evaluate that is not a function', { evaluate: 1, resetKey: () => undefined }],
    ['null', null],
    ['undefined', undefined],
  ])('is false for %s', (_what, store) => {
    expect(isRateKitStore(store)).toBe(false);
  });
});
