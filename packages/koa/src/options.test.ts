import { memoryStore, RateKitOptionError } from '@ratekit/core';
import { rateKitRatelimit } from './ratekit.js';
import { type RateLimitOptions, resolveOptions, resolveRenames } from './options.js';

type Options = RateLimitOptions<unknown>;

describe('resolveOptions: koa-ratelimit names, translated once to the gate', () => {
  describe('with no options', () => {
    it("takes koa-ratelimit's defaults: 2500 per hour, fixed window, namespace 'limit', legacy headers only (429 is the gate's default)", () => {
      const { gate, throw: throws } = resolveOptions();
      expect(gate).toMatchObject({ limit: 2500, windowMs: 3_600_000, algorithm: 'fixed-window', prefix: 'limit', statusCode: undefined, standardHeaders: false, legacyHeaders: true });
      expect(gate.store?.name).toBe('memory');
      expect(throws).toBe(false);
    });
  });

  describe('driver and db', () => {
    it('gives each middleware without db its own store', () => {
      expect(resolveOptions().gate.store).not.toBe(resolveOptions().gate.store);
    });

    it('shares one store between middlewares given the same Map, and only them', () => {
      const db = new Map();
      const a = resolveOptions({ driver: 'memory', db }).gate.store;
      expect(resolveOptions({ db }).gate.store).toBe(a);
      expect(resolveOptions({ db: new Map() }).gate.store).not.toBe(a);
    });

    it('uses the store given', () => {
      const store = memoryStore();
      expect(resolveOptions({ store }).gate.store).toBe(store);
    });
  });

  describe('headers', () => {
    it('maps the custom names from the legacy names', () => {
      const renames = resolveRenames({ remaining: 'Rate-Remaining', reset: 'Rate-Reset', total: 'Rate-Total' });
      expect([...renames!]).toEqual([
        ['x-ratelimit-remaining', 'Rate-Remaining'],
        ['x-ratelimit-reset', 'Rate-Reset'],
        ['x-ratelimit-limit', 'Rate-Total'],
      ]);
    });

    it('turns disableHeader into legacyHeaders: false', () => {
      expect(resolveOptions({ disableHeader: true }).gate).toMatchObject({ legacyHeaders: false, standardHeaders: false });
    });

    it('renames the legacy fields, and leaves the others as they are', () => {
      const { rename } = resolveOptions({ headers: { total: 'Rate-Total' } });
      expect(
        rename([
          ['X-RateLimit-Limit', '5'],
          ['X-RateLimit-Remaining', '4'],
          ['Retry-After', '1'],
        ]),
      ).toEqual([
        ['Rate-Total', '5'],
        ['X-RateLimit-Remaining', '4'],
        ['Retry-After', '1'],
      ]);
    });
  });

  describe('limits, keys and the refusal', () => {
    it('builds the limit from max, duration and algorithm; max may be any positive number, as every adapter’s limit', () => {
      expect(resolveOptions({ max: 10, duration: 1_000, algorithm: 'gcra' }).gate).toMatchObject({ algorithm: 'gcra', limit: 10, windowMs: 1_000 });
      expect(resolveOptions({ max: 1.5 }).gate.limit).toBe(1.5);
    });

    it('passes limits through, and translates id, whitelist, status and errorMessage to the gate’s names', () => {
      const limits = [{ limit: 1, windowMs: 1_000 }];
      const id = () => 'k';
      const whitelist = () => false;
      expect(resolveOptions({ limits, id, whitelist, status: 503, errorMessage: 'slow' }).gate).toMatchObject({ limits, keyGenerator: id, skip: whitelist, statusCode: 503, message: 'slow' });
    });
  });

  describe('with a bad option', () => {
    const store = memoryStore();
    // options | the option named | what the message says is expected
    const table: Array<[Options | null, string, string]> = [
      [null, 'options', 'an object'],
      [
        { driver: 'redis' as never },
        'driver',
        "'memory' in ratekit mode (for Redis, pass a RateLimitStore such as @ratekit/redis's as `store`, or drop the ratekit options to run koa-ratelimit's Redis driver)",
      ],
      [{ db: {} as never }, 'db', 'a Map'],
      [{ db: new Map(), store }, 'db', 'unset when `store` is given'],
      [{ driver: 'memory', store }, 'driver', 'unset when `store` is given'],
      [{ duration: 0 }, 'duration', 'a positive finite number of milliseconds'],
      [{ duration: '1h' as never }, 'duration', 'a positive finite number of milliseconds'],
      [{ max: 0 }, 'max', 'a positive finite number'],
      [{ algorithm: 'leaky-bucket' as never }, 'algorithm', "one of 'fixed-window'"],
      [{ limits: { limit: 1, windowMs: 1_000 }, max: 5 }, 'max', 'unset when `limits` is given'],
      [{ limits: { limit: 1, windowMs: 1_000 }, duration: 5 }, 'duration', 'unset when `limits` is given'],
      [{ id: 'ip' as never }, 'id', 'a function'],
      [{ whitelist: ['127.0.0.1'] as never }, 'whitelist', 'a function'],
      [{ blacklist: true as never }, 'blacklist', 'a function'],
      [{ onLimited: 'log' as never }, 'onLimited', 'a function'],
      [{ namespace: 'a\u0000b' }, 'namespace', 'a string without NUL characters'],
      [{ namespace: 5 as never }, 'namespace', 'a string without NUL characters'],
      [{ headers: 'X-Limit' as never }, 'headers', 'an object'],
      [{ headers: { remaining: 'Rate Remaining' } }, 'headers.remaining', 'a header name'],
      [{ headers: { used: 'X-Used' } as never }, 'headers.used', 'unset: only `remaining`, `reset` and `total` can be renamed'],
      [{ disableHeader: 'yes' as never }, 'disableHeader', 'a boolean'],
      [{ disableHeader: true, legacyHeaders: true }, 'legacyHeaders', 'unset or false when `disableHeader` is true'],
      [{ legacyHeaders: 1 as never }, 'legacyHeaders', 'a boolean'],
      [{ standardHeaders: 'draft-5' as never }, 'standardHeaders', "false, true or one of 'draft-6'"],
      [{ status: 200 }, 'status', 'an integer >= 400'],
      [{ status: 600 }, 'status', 'an integer from 400 to 599'],
      [{ errorMessage: 5 as never }, 'errorMessage', 'a string, an object (sent as JSON) or a function'],
      [{ errorMessage: null as never }, 'errorMessage', 'a string, an object (sent as JSON) or a function'],
      [{ throw: 'yes' as never }, 'throw', 'a boolean'],
      [{ windowMs: 60_000 } as never, 'windowMs', 'unset: ratelimit() has no such option (did you mean `duration`?)'],
      [{ keyGenerator: () => 'k' } as never, 'keyGenerator', 'unset: ratelimit() has no such option (did you mean `id`?)'],
      [{ colour: 'red' } as never, 'colour', 'unset: ratelimit() has no such option'],
    ];

    it.each(table)('%j throws a RateKitOptionError naming `%s`', (options, option, expected) => {
      let thrown: unknown;
      try {
        rateKitRatelimit(options as Options);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(RateKitOptionError);
      expect(thrown).toMatchObject({ code: 'ERR_RATEKIT_INVALID_OPTION', option });
      expect((thrown as RateKitOptionError).expected).toContain(expected);
    });
  });
});
