import { RateKitOptionError } from '../errors.js';
import { type GateAdapterSpec, resolveGateOptions } from './options.js';

const spec: GateAdapterSpec = { name: 'rateLimit()', options: ['getConnInfo'], renamed: { binding: 'store' }, standardHeaders: 'draft-6' };

/** The error `resolveGateOptions` throws for these options. */
function refusal(options: object): RateKitOptionError {
  try {
    resolveGateOptions(options, spec);
  } catch (error) {
    if (error instanceof RateKitOptionError) return error;
    throw error;
  }
  throw new Error('expected a RateKitOptionError');
}

describe('the gate’s options: checked once, when the middleware is built', () => {
  it('defaults to express-rate-limit’s 5 per minute, fixed window, 429, and the adapter’s standard headers', () => {
    const resolved = resolveGateOptions({}, spec);
    expect(resolved.limits).toEqual({ algorithm: 'fixed-window', limit: 5, windowMs: 60_000 });
    expect(resolved.statusCode).toBe(429);
    expect(resolved.headerOptions.standardHeaders).toBe('draft-6');
    expect(resolved.trustProxy).toBe(false);
    expect(resolved.ipv6Subnet).toBe(56);
  });

  it('takes any positive limit, as core’s limits do (one rule for every adapter), and refuses others naming the option', () => {
    expect(resolveGateOptions({ limit: 2.5 }, spec).limits).toMatchObject({ limit: 2.5 });
    for (const limit of [0, -1, Number.NaN, '5']) expect(refusal({ limit }).message).toMatch(/^\[ratekit\] Expected `limit` to be a positive finite number/);
  });

  it('accepts the adapter’s own options and refuses unknown ones, naming ours for another limiter’s, or the closest', () => {
    expect(() => resolveGateOptions({ getConnInfo: () => ({ remote: {} }) } as object, spec)).not.toThrow();
    expect(refusal({ max: 5 }).message).toContain('`max` to be unset: rateLimit() has no such option (did you mean `limit`?)');
    expect(refusal({ binding: {} }).message).toContain('(did you mean `store`?)');
    expect(refusal({ windowMS: 1 }).message).toContain('(did you mean `windowMs`?)');
  });

  it('refuses options that contradict each other', () => {
    expect(refusal({ limits: { limit: 1, windowMs: 1 }, limit: 2 }).option).toBe('limit');
    expect(refusal({ keyGenerator: () => 'k', trustProxy: 1 }).option).toBe('trustProxy');
    expect(refusal({ handler: () => undefined, message: 'no' }).option).toBe('message');
  });

  it('refuses trustProxy true (any client could choose its key), a bad subnet, and a status outside 400–599', () => {
    expect(refusal({ trustProxy: true }).option).toBe('trustProxy');
    expect(refusal({ ipv6Subnet: 129 }).option).toBe('ipv6Subnet');
    expect(refusal({ statusCode: 200 }).option).toBe('statusCode');
    expect(refusal({ statusCode: 600 }).option).toBe('statusCode');
    expect(refusal({ skip: 'yes' }).option).toBe('skip');
    expect(refusal({ message: null }).option).toBe('message');
  });
});
