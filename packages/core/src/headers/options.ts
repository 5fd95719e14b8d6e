import { RateKitOptionError } from '../errors.js';
import { assertObject, assertOneOf } from '../validate.js';

/**
 * The IETF RateLimit header drafts that can be sent, one at a time.
 * `draft-8` to `draft-11` have the same wire syntax and share one writer
 * (headers.md §3.4); the later names exist so a configuration can say which
 * text it follows.
 */
export const STANDARD_HEADER_DRAFTS = ['draft-6', 'draft-7', 'draft-8', 'draft-9', 'draft-10', 'draft-11'] as const;

/**
 * Which IETF RateLimit header draft to send, or none (`false`). Only one at a
 * time: draft-6 and draft-8 both write `RateLimit-Policy`, and draft-7 and
 * draft-8 both write `RateLimit`, in incompatible syntaxes.
 *
 * - `draft-6`: `RateLimit-Policy` + `RateLimit-Limit` / `-Remaining` / `-Reset`
 *   (draft-ietf-httpapi-ratelimit-headers-04 to -06);
 * - `draft-7`: `RateLimit-Policy` + the combined `RateLimit` Dictionary (-07);
 * - `draft-8` … `draft-11`: Structured Fields Lists of named policies,
 *   `RateLimit-Policy: "name";q=…;w=…` and `RateLimit: "name";r=…;t=…` (-08 to -11).
 */
export type StandardHeaders = false | (typeof STANDARD_HEADER_DRAFTS)[number];

/**
 * How `X-RateLimit-Reset` is written:
 * - `epoch`: the Unix epoch second of the reset, rounded up (express-rate-limit,
 *   koa2-ratelimit, GitHub, X);
 * - `delta`: seconds from now until the reset, rounded up (@fastify/rate-limit).
 */
export type LegacyResetFormat = 'epoch' | 'delta';

/** The layout of draft-8+ parameters. See {@link HeaderOptions.style}. */
export type HeaderStyle = 'express-rate-limit' | 'canonical';

/**
 * Header name/value pairs, in the order to send them. Values are always
 * strings (numbers break Bun and plain-object consumers). A name repeats
 * only for the draft-8+ List fields, one entry per policy, unless
 * `combineLists` is set: append those (Express `res.append`, Koa
 * `ctx.append`) or join them with `, `; set the others.
 */
export type HeaderList = Array<[name: string, value: string]>;

/** Options of {@link rateLimitHeaders}. */
export interface HeaderOptions {
  /** IETF RateLimit fields: `draft-6`, `draft-7`, `draft-8` (to `draft-11`: same bytes), or `false`. */
  standardHeaders: StandardHeaders;
  /** Legacy `X-RateLimit-Limit` / `-Remaining` / `-Reset`. */
  legacyHeaders: boolean;
  /**
   * draft-8+: the limiter key, sent hashed as the `pk` parameter of each
   * `RateLimit-Policy` item (as express-rate-limit does; see
   * {@link partitionKey}). Omit to leave `pk` out. The raw key is never sent.
   */
  partitionKey?: string;
  /** The format of `X-RateLimit-Reset`. @default 'epoch' */
  legacyReset?: LegacyResetFormat;
  /**
   * Whether a refusal carries `Retry-After`. When unset, it does whenever
   * `legacyHeaders` or `standardHeaders` is on (express-rate-limit's rule);
   * `true` sends it even with both off; `false` never sends it.
   * @default undefined
   */
  retryAfter?: boolean;
  /**
   * draft-8+ parameter layout:
   * - `express-rate-limit`: `"name"; r=1; t=60` (a space after each `;`),
   *   byte-identical to express-rate-limit, valid SF that parsers accept;
   * - `canonical`: `"name";r=1;t=60`, the RFC 9651 serialisation.
   * @default 'express-rate-limit'
   */
  style?: HeaderStyle;
  /**
   * draft-8+: `true` joins the members of each List field into one value
   * (`a, b`), for frameworks whose header setter overwrites (Fastify's
   * `reply.header`); `false` gives one entry per member, for frameworks
   * that append (Express `res.append`, Koa `ctx.append`).
   * @default false
   */
  combineLists?: boolean;
}

/**
 * The input accepted by {@link resolveHeaderOptions}: {@link HeaderOptions}
 * with every field optional, and `standardHeaders: true` accepted as
 * `'draft-6'` (express-rate-limit's meaning; it may change in a later major).
 */
export type HeaderOptionsInput = Partial<Omit<HeaderOptions, 'standardHeaders' | 'partitionKey'>> & {
  standardHeaders?: StandardHeaders | true;
};

const STANDARD_VALUES: readonly unknown[] = [false, ...STANDARD_HEADER_DRAFTS];

/**
 * Validates header options once, when an adapter is built, and fills in the
 * defaults, so {@link rateLimitHeaders} can trust them on every response.
 *
 * Defaults: `standardHeaders: false`, `legacyHeaders: true`,
 * `legacyReset: 'epoch'`, `retryAfter` unset (see {@link HeaderOptions.retryAfter}),
 * `style: 'express-rate-limit'`, `combineLists: false`: express-rate-limit's
 * defaults, so a drop-in sends the same headers unless told otherwise.
 *
 * @param input - the options, as given by the user
 * @param path - the option path used in error messages, e.g. `headers`; `''` for top-level options
 * @returns a frozen {@link HeaderOptions} (without `partitionKey`, which is per request)
 * @throws {RateKitOptionError} (code `ERR_RATEKIT_INVALID_OPTION`) naming the bad option
 * @example
 * ```ts
 * const headers = resolveHeaderOptions({ standardHeaders: 'draft-8', legacyHeaders: false });
 * // per request:
 * for (const [name, value] of rateLimitHeaders(decision, { ...headers, partitionKey: key })) res.append(name, value);
 * ```
 */
export function resolveHeaderOptions(input: HeaderOptionsInput = {}, path = ''): Readonly<HeaderOptions> {
  const at = (name: string): string => (path === '' ? name : `${path}.${name}`);
  assertObject(path === '' ? 'options' : path, input);
  const standard = input.standardHeaders === true ? 'draft-6' : (input.standardHeaders ?? false);
  if (!STANDARD_VALUES.includes(standard)) {
    throw new RateKitOptionError(at('standardHeaders'), `false, true or one of ${STANDARD_HEADER_DRAFTS.map((d) => `'${d}'`).join(', ')}`, standard);
  }
  const legacyHeaders = input.legacyHeaders ?? true;
  assertBoolean(at('legacyHeaders'), legacyHeaders);
  const legacyReset = input.legacyReset ?? 'epoch';
  assertOneOf(at('legacyReset'), legacyReset, ['epoch', 'delta'] as const);
  if (input.retryAfter !== undefined) assertBoolean(at('retryAfter'), input.retryAfter);
  const style = input.style ?? 'express-rate-limit';
  assertOneOf(at('style'), style, ['express-rate-limit', 'canonical'] as const);
  const combineLists = input.combineLists ?? false;
  assertBoolean(at('combineLists'), combineLists);
  return Object.freeze({
    standardHeaders: standard,
    legacyHeaders,
    legacyReset,
    retryAfter: input.retryAfter,
    style,
    combineLists,
  });
}

function assertBoolean(option: string, value: unknown): asserts value is boolean {
  if (typeof value !== 'boolean') throw new RateKitOptionError(option, 'a boolean', value);
}
