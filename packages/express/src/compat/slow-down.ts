import { RateKitOptionError } from '@ratekit/core';
import { type Counted, counterMiddleware, type Outcome } from './counter.js';
import { after } from '../maybe.js';
import { type CounterConfig, type Flavour, resolveOptions } from './options.js';
import { withInstanceMethods } from '../rate-limit.js';
import { DELAY_HEADER } from '../ratekit.js';
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
 * reaches the next handler). Nothing is ever refused.
 *
 * The delay is visible: `X-Slow-Down-Delay: <ms>` on every counted response
 * (`0` when not held; `delayHeader: false` turns it off), and on
 * `req.slowDown` (`{ limit: delayAfter, used, remaining, resetTime, key, delay }`).
 * With `legacyHeaders` / `standardHeaders` on, the RateLimit headers describe
 * `delayAfter` as the limit (never a `Retry-After`).
 *
 * @throws {Error} for `limit` or `max` (use `delayAfter`), or a numeric `maxDelayMs` over 2³¹ − 1 (express-slow-down's messages)
 * @throws {RateKitOptionError} for an option of the wrong type, or a ratekit option
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
  const { delayAfter = 1, delayMs, maxDelayMs = MAX_DELAY_MS, delayHeader = true } = options;
  checkFunctionOrNumber('delayAfter', delayAfter, 'a number of requests or a function of the request');
  checkFunctionOrNumber('delayMs', delayMs ?? 0, 'a number of milliseconds or a function (used, req, res)');
  checkFunctionOrNumber('maxDelayMs', maxDelayMs, 'a number of milliseconds or a function of the request');
  if (typeof delayHeader !== 'boolean') throw new RateKitOptionError('delayHeader', 'a boolean', delayHeader);

  const config = resolveOptions(options as never, SLOW_DOWN) as CounterConfig;
  const enabled = config.validations.enabled;
  if (typeof delayMs === 'number' && (enabled['delayMs'] ?? enabled['default'])) {
    config.logger.warn(new ExpressSlowDownWarning('WRN_ESD_DELAYMS', numericDelayMessage(config.requestPropertyName, delayMs)));
  }

  const outcome: Outcome = {
    refuses: false,
    limitOf: (req, res) => (typeof delayAfter === 'function' ? delayAfter(req, res) : delayAfter),
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
            typeof maxDelayMs === 'function' ? maxDelayMs(req, res) : maxDelayMs,
            (bound) => hold(counted, Math.min(Math.max(0, Math.min(unbounded, bound)) || 0, MAX_DELAY_MS)),
            fail,
          ),
        fail,
      );
    },
  };

  /** Records the delay, shows it, and passes the request on once it has passed (never, if the client leaves first). */
  function hold({ req, res, next, done }: Counted, delay: number): void {
    (req as unknown as Record<string, SlowDownInfo>)[config.requestPropertyName]!.delay = delay;
    if (delayHeader && !res.headersSent) res.setHeader(DELAY_HEADER, String(Math.ceil(delay)));
    if (delay <= 0) {
      next();
      return;
    }
    const timer = setTimeout(() => next(), delay);
    res.once('close', () => {
      clearTimeout(timer);
      done();
    });
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
