/**
 * express-rate-limit v8's configuration checks, with its codes, messages and
 * help links, so logs and dashboards keyed on `ERR_ERL_*` keep working after
 * the import is swapped. Each check is logged, never thrown, and runs at most
 * once per limiter (whatever its outcome, as express-rate-limit ≥ 8.6), and
 * `validate` turns checks off one by one or all at once.
 *
 * Behaviour source: express-rate-limit `source/validations.ts` and
 * `docs/reference/error-codes.mdx` (see docs/migrating/express-rate-limit.md).
 *
 * @module
 */
import { isIP } from 'node:net';
import type { Request } from 'express';
import type { EnabledValidations, Logger, Store } from '../types.js';
import { VALIDATION_NAMES } from '../validation-names.js';
import { ConsoleLogger } from './console-logger.js';

/**
 * A configuration problem, as express-rate-limit reports it: `code`
 * (`ERR_ERL_*`), a `help` link, and the message followed by
 * `See <help> for more information.`. Logged through `logger.error`.
 */
export class ValidationError extends Error {
  /** The stable code, e.g. `ERR_ERL_PERMISSIVE_TRUST_PROXY`. */
  readonly code: string;
  /** `https://express-rate-limit.github.io/<code>/`. */
  readonly help: string;

  constructor(code: string, message: string) {
    const help = `https://express-rate-limit.github.io/${code}/`;
    super(`${message} See ${help} for more information.`);
    this.name = new.target.name;
    this.code = code;
    this.help = help;
  }
}

/** A warning about a changed behaviour (`WRN_ERL_*`), logged through `logger.warn`. */
export class ChangeWarning extends ValidationError {}

/** The IETF drafts express-rate-limit names in `ERR_ERL_HEADERS_UNSUPPORTED_DRAFT_VERSION`. */
const ERL_DRAFTS = 'draft-6, draft-7, draft-8';

/** The option names express-rate-limit v8 knows (its `knownOptions` list), plus the three it tolerates from express-slow-down. */
const ERL_OPTIONS = [
  'windowMs',
  'limit',
  'message',
  'statusCode',
  'legacyHeaders',
  'standardHeaders',
  'identifier',
  'retryAfter',
  'requestPropertyName',
  'skipFailedRequests',
  'skipSuccessfulRequests',
  'keyGenerator',
  'ipv6Subnet',
  'handler',
  'skip',
  'requestWasSuccessful',
  'store',
  'validate',
  'headers',
  'max',
  'passOnStoreError',
  'logger',
  'draft_polli_ratelimit_headers',
  'delayAfter',
  'delayMs',
  'maxDelayMs',
];

/** ratekit's own options, known too. */
const RATEKIT_OPTIONS = ['algorithm', 'limits', 'cost', 'prefix', 'onStoreError', 'storeTimeoutMs', 'onError', 'now', 'delayHeader', 'refusalCache'];

const KNOWN_OPTIONS: ReadonlySet<string> = new Set([...ERL_OPTIONS, ...RATEKIT_OPTIONS]);

/** The largest delay `setInterval`/`setTimeout` accept, 2³¹ − 1 ms. */
const SET_TIMEOUT_MAX = 2 ** 31 - 1;

/** Stores already given to a limiter (`unsharedStore`). */
const usedStores = new WeakSet<object>();
/** Per request, the keys each store counted (`singleCount`). */
const countedKeys = new WeakMap<object, Map<unknown, string[]>>();

/**
 * The checks. Each throws a {@link ValidationError} when it finds a problem;
 * the wrapper built by {@link createValidations} logs it instead.
 */
const checks = {
  ip(ip: unknown): void {
    if (ip === undefined) {
      throw new ValidationError('ERR_ERL_UNDEFINED_IP_ADDRESS', "An undefined 'request.ip' was detected. This might indicate a misconfiguration or the connection being destroyed prematurely.");
    }
    if (typeof ip !== 'string' || isIP(ip) === 0) {
      throw new ValidationError(
        'ERR_ERL_INVALID_IP_ADDRESS',
        // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the message shows the bad value as express-rate-limit's does
        `An invalid 'request.ip' (${String(ip)}) was detected. Consider passing a custom 'keyGenerator' function to the rate limiter.`,
      );
    }
  },

  trustProxy(req: Request): void {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- as express-rate-limit: requests built without Express (test doubles, other servers) lack app or socket
    if (req.app?.get('trust proxy') === true) {
      throw new ValidationError('ERR_ERL_PERMISSIVE_TRUST_PROXY', "The Express 'trust proxy' setting is true, which allows anyone to trivially bypass IP-based rate limiting.");
    }
  },

  xForwardedForHeader(req: Request): void {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- as express-rate-limit: requests built without Express (test doubles, other servers) lack app or socket
    if (req.headers['x-forwarded-for'] && req.app?.get('trust proxy') === false) {
      throw new ValidationError(
        'ERR_ERL_UNEXPECTED_X_FORWARDED_FOR',
        "The 'X-Forwarded-For' header is set but the Express 'trust proxy' setting is false (default). This could indicate a misconfiguration which would prevent express-rate-limit from accurately identifying users.",
      );
    }
  },

  forwardedHeader(req: Request): void {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- as express-rate-limit: requests built without Express (test doubles, other servers) lack app or socket
    if (req.headers.forwarded && req.ip === req.socket?.remoteAddress) {
      throw new ValidationError(
        'ERR_ERL_FORWARDED_HEADER',
        "The 'Forwarded' header (standardized X-Forwarded-For) is set but currently being ignored. Add a custom keyGenerator to use a value from this header.",
      );
    }
  },

  positiveHits(hits: unknown): void {
    if (typeof hits !== 'number' || hits < 1 || hits !== Math.round(hits)) {
      throw new ValidationError('ERR_ERL_INVALID_HITS', `The totalHits value returned from the store must be a positive integer, got ${String(hits)}`);
    }
  },

  unsharedStore(store: object): void {
    if (usedStores.has(store)) {
      const unique = (store as Store).localKeys ? '' : ' (with a unique prefix)';
      throw new ValidationError(
        'ERR_ERL_STORE_REUSE',
        `A Store instance must not be shared across multiple rate limiters. Create a new instance of ${store.constructor.name}${unique} for each limiter instead.`,
      );
    }
    usedStores.add(store);
  },

  /**
   * @param storeIdentity - what counts as "the same store": the instance for
   * stores whose keys are local, else its class name (another instance may
   * share the same backend)
   */
  singleCount(req: object, storeIdentity: unknown, prefixedKey: string, key: unknown): void {
    let byStore = countedKeys.get(req);
    if (byStore === undefined) {
      byStore = new Map();
      countedKeys.set(req, byStore);
    }
    let keys = byStore.get(storeIdentity);
    if (keys === undefined) {
      keys = [];
      byStore.set(storeIdentity, keys);
    }
    if (keys.includes(prefixedKey)) {
      throw new ValidationError('ERR_ERL_DOUBLE_COUNT', `The hit count for ${String(key)} was incremented more than once for a single request.`);
    }
    keys.push(prefixedKey);
  },

  limit(limit: unknown): void {
    if (limit === 0) {
      throw new ChangeWarning('WRN_ERL_MAX_ZERO', 'Setting limit or max to 0 disables rate limiting in express-rate-limit v6 and older, but will cause all requests to be blocked in v7');
    }
  },

  draftPolliHeaders(value: unknown): void {
    if (value) {
      throw new ChangeWarning(
        'WRN_ERL_DEPRECATED_DRAFT_POLLI_HEADERS',
        "The draft_polli_ratelimit_headers configuration option is deprecated and has been removed in express-rate-limit v7, please set standardHeaders: 'draft-6' instead.",
      );
    }
  },

  onLimitReached(value: unknown): void {
    if (value) {
      throw new ChangeWarning('WRN_ERL_DEPRECATED_ON_LIMIT_REACHED', 'The onLimitReached configuration option is deprecated and has been removed in express-rate-limit v7.');
    }
  },

  headersDraftVersion(version: unknown): void {
    if (typeof version === 'string' && ERL_DRAFTS.split(', ').includes(version)) return;
    throw new ValidationError('ERR_ERL_HEADERS_UNSUPPORTED_DRAFT_VERSION', `standardHeaders: only the following versions of the IETF draft specification are supported: ${ERL_DRAFTS}.`);
  },

  headersResetTime(resetTime: unknown): void {
    if (!resetTime) {
      throw new ValidationError(
        'ERR_ERL_HEADERS_NO_RESET',
        "standardHeaders:  'draft-7' requires a 'resetTime', but the store did not provide one. The 'windowMs' value will be used instead, which may cause clients to wait longer than necessary.",
      );
    }
  },

  knownOptions(options: object | undefined): void {
    if (!options) return;
    for (const key of Object.keys(options)) {
      if (!KNOWN_OPTIONS.has(key)) throw new ValidationError('ERR_ERL_UNKNOWN_OPTION', `Unexpected configuration option: ${key}`);
    }
  },

  /** Needs the enabled map and the names this limiter supports: see the wrapper. */
  validationsConfig(enabled: Record<string, boolean>, supported: readonly string[]): void {
    for (const key of Object.keys(enabled)) {
      if (!supported.includes(key)) {
        throw new ValidationError('ERR_ERL_UNKNOWN_VALIDATION', `options.validate.${key} is not recognized. Supported validate options are: ${supported.join(', ')}.`);
      }
    }
  },

  creationStack(store: object): void {
    // Node's default stack depth, as express-rate-limit captures it.
    const { stack } = new Error('express-rate-limit validation check (set options.validate.creationStack=false to disable)');
    // Express 4's and Express 5's (router 2) layer frames.
    if (stack?.includes('Layer.handle [as handle_request]') || stack?.includes('Layer.handleRequest')) {
      throw new ValidationError(
        'ERR_ERL_CREATED_IN_REQUEST_HANDLER',
        (store as Store).localKeys
          ? 'express-rate-limit instance should be created at app initialization, not when responding to a request.'
          : 'express-rate-limit instance should *usually* be created at app initialization, not when responding to a request.',
      );
    }
  },

  ipv6Subnet(ipv6Subnet: unknown): void {
    if (ipv6Subnet === false) return;
    if (!Number.isInteger(ipv6Subnet) || (ipv6Subnet as number) < 32 || (ipv6Subnet as number) > 64) {
      throw new ValidationError('ERR_ERL_IPV6_SUBNET', `Unexpected ipv6Subnet value: ${String(ipv6Subnet)}. Expected an integer between 32 and 64 (usually 48-64).`);
    }
  },

  ipv6SubnetOrKeyGenerator(options: { ipv6Subnet?: unknown; keyGenerator?: unknown }): void {
    if (options.ipv6Subnet !== undefined && options.keyGenerator) {
      throw new ValidationError('ERR_ERL_IPV6SUBNET_OR_KEYGENERATOR', "Incompatible options: the 'ipv6Subnet' option is ignored when a custom 'keyGenerator' function is also set.");
    }
  },

  keyGeneratorIpFallback(keyGenerator: unknown): void {
    if (typeof keyGenerator !== 'function') return;
    // Source-text sniffing, as express-rate-limit does it (false positives included): turn it off with validate.
    const source = Function.prototype.toString.call(keyGenerator);
    if ((source.includes('req.ip') || source.includes('request.ip')) && !source.includes('ipKeyGenerator')) {
      throw new ValidationError(
        'ERR_ERL_KEY_GEN_IPV6',
        'Custom keyGenerator appears to use request IP without calling the ipKeyGenerator helper function for IPv6 addresses. This could allow IPv6 users to bypass limits.',
      );
    }
  },

  windowMs(windowMs: unknown): void {
    if (typeof windowMs !== 'number' || Number.isNaN(windowMs) || windowMs < 1 || windowMs > SET_TIMEOUT_MAX) {
      const type = typeof windowMs !== 'number' ? ` (${typeof windowMs})` : '';
      throw new ValidationError('ERR_ERL_WINDOW_MS', `Invalid windowMs value: ${String(windowMs)}${type}, must be a number between 1 and ${SET_TIMEOUT_MAX} when using the default MemoryStore`);
    }
  },
};

type Checks = typeof checks;

/**
 * One limiter's checks: the same methods as the checks, each a no-op once it
 * has run or when it is turned off, logging what it finds.
 */
export type Validations = {
  /**
   * The live map of checks still to run (`default` covers the unnamed ones).
   * A check sets its own entry to `false` when it runs. Handlers and stores
   * receive it as `options.validate`.
   */
  readonly enabled: EnabledValidations & Record<string, boolean | undefined>;
} & { [K in Exclude<keyof Checks, 'validationsConfig'>]: (...args: Parameters<Checks[K]>) => void } & {
  /** Logs `ERR_ERL_UNKNOWN_VALIDATION` for a name in `validate` that is not a check. */
  validationsConfig(): void;
};

/**
 * Builds one limiter's checks from its `validate` option.
 *
 * - `true` / `false`: every check on / off (`{ default: <value> }`);
 * - an object: `{ default: true, ...validate }`, so a name set to `false` turns that check off.
 *
 * A check that finds a problem logs it: a {@link ChangeWarning} through
 * `logger.warn`, any other {@link ValidationError} through `logger.error`.
 * Each check runs at most once, then turns itself off. Never throws.
 *
 * @param extraNames - further names `validate` may hold (slowDown's `delayMs`)
 */
export function createValidations(validate: boolean | EnabledValidations, logger: Logger, extraNames: readonly string[] = []): Validations {
  const enabled: Record<string, boolean | undefined> = typeof validate === 'boolean' ? { default: validate } : { default: true, ...validate };
  const supported: string[] = [...VALIDATION_NAMES, ...extraNames, 'default'];
  const wrapped: Record<string, unknown> = { enabled };
  for (const name of VALIDATION_NAMES) {
    // eslint-disable-next-line @typescript-eslint/unbound-method -- the checks are plain functions that never read `this`
    const check = checks[name] as (a?: unknown, b?: unknown, c?: unknown, d?: unknown) => void;
    // Fixed arity (no check takes more than four arguments): a rest parameter would allocate an array
    // on every call, and the per-request checks are called on every request long after they ran.
    wrapped[name] = (a?: unknown, b?: unknown, c?: unknown, d?: unknown) => {
      if (!(enabled[name] ?? enabled['default'])) return;
      enabled[name] = false;
      try {
        if (name === 'validationsConfig') check(enabled, supported);
        else check(a, b, c, d);
      } catch (error) {
        if (error instanceof ChangeWarning) logger.warn(error);
        else logger.error(error);
      }
    };
  }
  return wrapped as Validations;
}

/** express-rate-limit's internal validations object: its argument shapes, plus `disable()`. */
export type UpstreamValidations = Omit<Validations, 'singleCount'> & {
  /** `ERR_ERL_DOUBLE_COUNT`, given the store itself (its instance when its keys are local, else its class, with its `prefix`). */
  singleCount(req: object, store: Pick<Store, 'localKeys' | 'prefix'>, key: unknown): void;
  /** Turns every check off. */
  disable(): void;
};

/**
 * express-rate-limit's `getValidations(enabled, logger)`, with the shapes of
 * its internal module: what code (and tests) written against it call. The
 * logger defaults to the console. The checks are {@link createValidations}'.
 */
export function getValidations(validate: boolean | EnabledValidations = true, logger: Logger = ConsoleLogger): UpstreamValidations {
  const validations = createValidations(validate, logger);
  return {
    ...validations,
    singleCount: (req, store, key) => validations.singleCount(req, store.localKeys ? store : store.constructor.name, `${store.prefix ?? ''}${String(key)}`, key),
    disable() {
      for (const name of Object.keys(validations.enabled)) validations.enabled[name] = false;
    },
  };
}
