import { checkWrongOptions, type WrongOptionOutcome } from '@ratekit/test-utils';
import Fastify from 'fastify';
import fastifyRateLimit from '../index.js';

/** The options of @fastify/rate-limit 11 a route's `config.rateLimit` takes, and the plugin's own. */
const ROUTE_OPTIONS = [
  'max',
  'timeWindow',
  'allowList',
  'ban',
  'onBanReach',
  'onExceeding',
  'onExceeded',
  'keyGenerator',
  'errorResponseBuilder',
  'addHeaders',
  'addHeadersOnExceeding',
  'groupId',
  'continueExceeding',
  'skipOnError',
  'exponentialBackoff',
  'hook',
  'ipv6Subnet',
];
// Not `cache`: a huge one (1e300) is refused by lru-cache with its own error (toad-cache, upstream's, takes it).
const PLUGIN_OPTIONS = [...ROUTE_OPTIONS, 'global', 'nameSpace', 'enableDraftSpec', 'storeTimeoutMs'];
const FUNCTION_OPTIONS = ['max', 'timeWindow', 'allowList', 'onBanReach', 'onExceeding', 'onExceeded', 'keyGenerator', 'errorResponseBuilder'];

/** Registers the plugin (or declares the route) with `{ [option]: value }`, then sends three requests (the third refused). */
async function attempt(where: 'plugin' | 'route', option: string, value: unknown, draft: boolean, ratekitMode = false): Promise<WrongOptionOutcome> {
  const app = Fastify();
  try {
    const base = { max: 2, timeWindow: 60_000, enableDraftSpec: draft, ...(ratekitMode ? { algorithm: 'fixed-window' } : {}) };
    await app.register(fastifyRateLimit, (where === 'plugin' ? { ...base, [option]: value } : base) as never);
    app.get('/', where === 'route' ? { config: { rateLimit: { max: 2, timeWindow: 60_000, [option]: value } } } : {}, async () => 'ok');
    await app.ready();
  } catch (thrown) {
    await app.close().catch(() => undefined);
    return { thrown };
  }
  const responses = [];
  for (let i = 0; i < 3; i++) {
    const res = await app.inject({ method: 'GET', url: '/' });
    responses.push({ status: res.statusCode, headers: res.headers as Record<string, unknown> });
  }
  await app.close();
  return { responses };
}

/** @fastify/rate-limit's own errors when a route is declared: a groupId that is not a string. */
const incumbentError = (option: string, _value: unknown, error: unknown) => option === 'groupId' && (error as Error | null)?.message === 'groupId must be a string';

describe('@fastify/rate-limit mode, each option given a value of the wrong type', () => {
  it("in a route's config.rateLimit: refused when the route is declared (ERR_RATEKIT_INVALID_OPTION), or every request answered without a 500 and with finite header values", async () => {
    await checkWrongOptions({
      options: ROUTE_OPTIONS,
      variants: [false, true],
      functionOptions: FUNCTION_OPTIONS,
      attempt: (option, value, draft) => attempt('route', option, value, draft as boolean),
      incumbentError: (option, value, error) => incumbentError(option, value, error) || isRouteRefusal(option, error),
    });
  });

  it('in the plugin options: refused when registered (ERR_RATEKIT_INVALID_OPTION), or every request answered without a 500 and with finite header values', async () => {
    await checkWrongOptions({
      options: PLUGIN_OPTIONS,
      variants: [false, true],
      functionOptions: FUNCTION_OPTIONS,
      attempt: (option, value, draft) => attempt('plugin', option, value, draft as boolean),
      incumbentError,
    });
  });
});

describe('ratekit mode (the plugin given a ratekit option), each route option given a value of the wrong type', () => {
  it('is refused when the route is declared (ERR_RATEKIT_INVALID_OPTION), or every request answered without a 500 and with finite header values', async () => {
    await checkWrongOptions({
      options: ROUTE_OPTIONS,
      variants: [false, true],
      anyOptionNamed: true,
      functionOptions: FUNCTION_OPTIONS,
      attempt: (option, value, draft) => attempt('route', option, value, draft as boolean, true),
      incumbentError,
    });
  });
});

/** A route option is refused under its path, `config.rateLimit.<option>`. */
function isRouteRefusal(option: string, error: unknown): boolean {
  const e = error as { code?: string; option?: string } | null;
  return e?.code === 'ERR_RATEKIT_INVALID_OPTION' && e.option === `config.rateLimit.${option}`;
}
