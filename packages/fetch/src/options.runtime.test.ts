// Every option is checked when the function is built.
// Written against the runtime matrix's subset of jest, so it runs on Node (jest), Bun, Deno and workerd alike.
import { rateLimit } from '@ratekit/fetch';

describe('rateLimit: options', () => {
  describe('options are checked when the function is built', () => {
    const bad: Array<[string, Record<string, unknown>]> = [
      ['limit', { limit: 0 }],
      ['windowMs', { windowMs: -1 }],
      ['algorithm', { algorithm: 'leaky' }],
      ['limit', { limits: { limit: 1, windowMs: 1_000 }, limit: 5 }],
      ['statusCode', { statusCode: 200 }],
      ['standardHeaders', { standardHeaders: 'draft-5' }],
      ['legacyHeaders', { legacyHeaders: 'yes' }],
      ['trustProxy', { trustProxy: true }],
      ['ipv6Subnet', { ipv6Subnet: 129 }],
      ['ipHeader', { ipHeader: 'not a header' }],
      ['trustProxy', { ipHeader: 'cf-connecting-ip', trustProxy: 1 }],
      ['ipHeader', { keyGenerator: () => 'k', ipHeader: 'cf-connecting-ip' }],
      ['message', { message: 'x', handler: () => new Response() }],
      ['skip', { skip: true }],
      ['max', { max: 5 }],
      ['skipFailedRequests', { skipFailedRequests: true }],
      ['onStoreError', { onStoreError: 'ignore' }],
      ['storeTimeoutMs', { storeTimeoutMs: -5 }],
      ['store', { store: {} }],
    ];
    it.each(bad)('refuses a bad `%s`: %j', (option, options) => {
      let thrown: unknown;
      try {
        rateLimit(options as Parameters<typeof rateLimit>[0]);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toMatchObject({ code: 'ERR_RATEKIT_INVALID_OPTION', option });
    });
  });
});

describe('rateLimit: what the errors say', () => {
  /** The message of what `rateLimit(options)` throws. */
  function messageOf(options: Record<string, unknown>): string {
    try {
      rateLimit(options as Parameters<typeof rateLimit>[0]);
    } catch (error) {
      return (error as Error).message;
    }
    return 'nothing thrown';
  }

  it('names our option for another limiter’s', () => {
    expect(messageOf({ max: 5 })).toContain('did you mean `limit`?');
  });

  it('says why there is no such option where the Fetch API has no response to see', () => {
    expect(messageOf({ requestPropertyName: 'rateLimit' })).toContain('`result.decision`');
    expect(messageOf({ skipSuccessfulRequests: true })).toContain('limit.limiter.refund(result.key)');
  });

  it('refuses trustProxy: true, which would let any client choose its key', () => {
    expect(messageOf({ trustProxy: true })).toContain('any client choose its key');
  });
});
