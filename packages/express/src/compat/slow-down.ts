import { DELAY_HEADER, RateKitOptionError } from '@ratekit/core';
import { type Counted, counterMiddleware, type Outcome } from './counter.js';
import { after, isThenable } from '../maybe.js';
import type { Flavour } from './common-config.js';
import { resolveOptions } from './options.js';
import { withInstanceMethods } from './rate-limit.js';
import type { DelayFn, SlowDownInfo, SlowDownOptions, SlowDownRequestHandler, ValueDeterminingMiddleware } from '../types.js';
import { ValidationError } from './validations.js';

/** The longest delay Node's `setTimeout` accepts, 2³¹ − 1 ms. */
const MAX_DELAY_MS = 2 ** 31 - 1;

const SLOW_DOWN: Flavour = {
  name: 'slowDown',
  // express-slow-down's: no headers unless asked, info on req.slowDown, and a limit of 0 (every request reaches the outcome).
  defaults: { requestPropertyName: 'slowDown', legacyHeaders: false, standardHeaders: false, limit: 0 },
  extraValidations: ['delayMs'],
  ownOptions: ['handler'],
};

/** express-slow-down's warning for a numeric `delayMs`, whose meaning changed in its v2. */
class ExpressSlowDownWarning extends ValidationError {}

/**
 * Express middleware that slows clients down instead of refusing them: a
 * drop-in for express-slow-down v2/v3, on the same counting as
 * {@link rateLimit}'s express-rate-limit mode (so every express-rate-limit
 * store works with it, and {@link MemoryStore} by default).
 *
 * Each request counts. Once a key has made more than `delayAfter` requests
 * in the window, each further request is held for `delayMs` (a number: the
 * same for each; a function of the hits so far: e.g. the default,
 * `(used - delayAfter) × 1000`), at most `maxDelayMs`, then passed on. The
 * wait is a timer, cancelled when the client disconnects (the request never
 * reaches the next handler). Nothing is ever refused. As express-slow-down's,
 * the middleware's promise settles once the request is passed on, or, for a
 * held one, once its timer is set (not when the delay has run).
 *
 * The delay is on `req.slowDown` (`{ limit: delayAfter, used, remaining,
 * resetTime, key, delay }`), and, with `delayHeader: true` (ratekit's; off by
 * default, as express-slow-down sends no such header), in
 * `X-Slow-Down-Delay: <ms>` on every counted response (`0` when not held).
 * With `legacyHeaders` / `standardHeaders` on, the RateLimit headers describe
 * `delayAfter` as the limit (never a `Retry-After`).
 *
 * @throws {Error} for `limit` or `max` (use `delayAfter`), or a numeric `maxDelayMs` over 2³¹ − 1 (express-slow-down's messages)
 * @throws {RateKitOptionError} (code `ERR_RATEKIT_INVALID_OPTION`) for an option of the wrong type, a ratekit option, a `delayAfter` that is not a finite number ≥ 0 (`-Infinity` would hold every request for ~24 days, `Infinity` never one), or a `maxDelayMs` below 0; a `delayAfter` or `maxDelayMs` function answering such a value sends that error to `next(err)`
 * @see docs/migrating/express-slow-down.md
 * @example
 * ```ts
 * import { slowDown } from '@ratekit/express';
 *
 * // 100 requests per 15 minutes at full speed, then 500 ms more per request, up to 20 s.
 * app.use(slowDown({ windowMs: 15 * 60_000, delayAfter: 100, delayMs: (used) => (used - 100) * 500, maxDelayMs: 20_000 }));
 * ```
 */
export function slowDown(options: SlowDownOptions = {}): SlowDownRequestHandler {
  const given = options as SlowDownOptions & { limit?: unknown; max?: unknown };
  if ((given.limit ?? given.max) !== undefined) {
    throw new Error('The limit/max option is not supported by express-slow-down, please use delayAfter instead.');
  }
  if (typeof options.maxDelayMs === 'number' && options.maxDelayMs > MAX_DELAY_MS) {
    throw new Error(`The 'maxDelayMs' option cannot be greater than ${MAX_DELAY_MS} due to Node.js setTimeout limits.`);
  }
  const { delayAfter = 1, delayMs, maxDelayMs = MAX_DELAY_MS, delayHeader = false } = options;
  checkFunctionOrNumber('delayAfter', delayAfter, DELAY_AFTER);
  checkFunctionOrNumber('delayMs', delayMs ?? 0, 'a number of milliseconds or a function (used, req, res)');
  checkFunctionOrNumber('maxDelayMs', maxDelayMs, MAX_DELAY);
  // express-slow-down takes these in silence; each would hold requests it should not (delayAfter -Infinity
  // holds every request for the longest timer, ~24 days) or never hold one (Infinity, a negative maxDelayMs).
  if (typeof delayAfter === 'number') checkDelayAfter(delayAfter);
  if (typeof maxDelayMs === 'number') checkMaxDelay(maxDelayMs);
  if (typeof delayHeader !== 'boolean') throw new RateKitOptionError('delayHeader', 'a boolean', delayHeader);

  const config = resolveOptions(options, SLOW_DOWN);
  const enabled = config.validations.enabled;
  if (typeof delayMs === 'number' && (enabled['delayMs'] ?? enabled['default'])) {
    config.logger.warn(new ExpressSlowDownWarning('WRN_ESD_DELAYMS', numericDelayMessage(config.requestPropertyName, delayMs)));
  }

  const outcome: Outcome = {
    refuses: false,
    // A function's answer is checked as the number would be: a bad one is the request's error, never a hang.
    limitOf: (req, res) => (typeof delayAfter === 'function' ? checked(delayAfter(req, res), checkDelayAfter) : delayAfter),
    settle(counted, fail) {
      const { req, res, info } = counted;
      if (info.used <= info.limit) {
        hold(counted, 0);
        return;
      }
      const delay: ReturnType<DelayFn> = typeof delayMs === 'function' ? delayMs(info.used, req, res) : (delayMs ?? (info.used - info.limit) * 1_000);
      after(
        delay,
        (unbounded) =>
          after(
            typeof maxDelayMs === 'function' ? checked(maxDelayMs(req, res), checkMaxDelay) : maxDelayMs,
            (bound) => hold(counted, Math.min(Math.max(0, Math.min(unbounded, bound)) || 0, MAX_DELAY_MS)),
            fail,
          ),
        fail,
      );
    },
  };

  /**
   * Records the delay, shows it when asked, and passes the request on once it has passed (never, if
   * the client leaves first). The middleware's promise settles once the timer is set, as
   * express-slow-down's does (its handler returns then): whoever awaits the middleware, e.g. a test
   * on fake timers, gets control back to advance the clock.
   */
  function hold({ req, res, next, done }: Counted, delay: number): void {
    (req as unknown as Record<string, SlowDownInfo>)[config.requestPropertyName]!.delay = delay;
    if (delayHeader && !res.headersSent) res.setHeader(DELAY_HEADER, String(Math.ceil(delay)));
    if (delay <= 0) {
      next();
      return;
    }
    const timer = setTimeout(() => next(), delay);
    res.once('close', () => clearTimeout(timer));
    done();
  }

  return withInstanceMethods(counterMiddleware(config, outcome), config);
}

/** express-slow-down's WRN_ESD_DELAYMS text, byte for byte. */
function numericDelayMessage(requestPropertyName: string, delayMs: number): string {
  return [
    "The behaviour of the 'delayMs' option was changed in express-slow-down v2:",
    '- For the old behavior, change the delayMs option to:',
    '',
    '  delayMs: (used, req) => {',
    `\t  const delayAfter = req.${requestPropertyName}.limit;`,
    `\t  return (used - delayAfter) * ${delayMs};`,
    '  },',
    '',
    '- For the new behavior, change the delayMs option to:',
    '',
    `\tdelayMs: () => ${delayMs},`,
    '',
    "Or set 'options.validate: {delayMs: false}' to disable this message.",
  ].join('\n');
}

function checkFunctionOrNumber(option: string, value: unknown, expected: string): asserts value is number | ValueDeterminingMiddleware<number> {
  if (typeof value === 'function') return;
  if (typeof value !== 'number' || Number.isNaN(value)) throw new RateKitOptionError(option, expected, value);
}

const DELAY_AFTER = 'a finite number of requests >= 0, or a function of the request returning one';
const MAX_DELAY = `a number of milliseconds from 0 to ${MAX_DELAY_MS}, or a function of the request returning one`;

/** `delayAfter` must be a finite count ≥ 0 (`ERR_RATEKIT_INVALID_OPTION` otherwise). */
function checkDelayAfter(value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw new RateKitOptionError('delayAfter', DELAY_AFTER, value);
  return value;
}

/** `maxDelayMs` must be 0 to 2³¹ − 1 ms (`ERR_RATEKIT_INVALID_OPTION` otherwise). */
function checkMaxDelay(value: unknown): number {
  if (typeof value !== 'number' || Number.isNaN(value) || value < 0 || value > MAX_DELAY_MS) throw new RateKitOptionError('maxDelayMs', MAX_DELAY, value);
  return value;
}

/** Checks a function's answer, now or once its promise resolves. */
function checked(value: number | PromiseLike<number>, check: (value: unknown) => number): number | Promise<number> {
  return isThenable(value) ? Promise.resolve(value).then(check) : check(value);
}
