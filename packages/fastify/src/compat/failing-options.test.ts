import { RateKitOptionError } from '@ratekit/core';
import Fastify, { type FastifyPluginCallback } from 'fastify';
import fastifyRateLimit from '../index.js';

const upstream = require('@fastify/rate-limit') as FastifyPluginCallback<Record<string, unknown>>;

/** Registers `plugin` and declares GET / with `config.rateLimit` = `route`; what was thrown, or the statuses of two requests. */
async function attempt(plugin: unknown, options: Record<string, unknown>, route: Record<string, unknown> | undefined) {
  const app = Fastify();
  try {
    await app.register(plugin as FastifyPluginCallback<Record<string, unknown>>, { max: 1, ...options });
    app.get('/', route === undefined ? {} : { config: { rateLimit: { max: 1, ...route } } }, async () => 'ok');
    await app.ready();
  } catch (thrown) {
    await app.close().catch(() => undefined);
    return { thrown };
  }
  const statuses = [];
  for (let i = 0; i < 2; i++) statuses.push((await app.inject({ method: 'GET', url: '/' })).statusCode);
  await app.close();
  return { statuses: statuses.join(',') };
}

describe('@fastify/rate-limit mode refuses, when a route is declared, a config.rateLimit value @fastify/rate-limit takes and then fails every request with', () => {
  it.each<[string, Record<string, unknown>, string, string]>([
    ['onExceeding: 1 (a 500 on every admitted request)', { onExceeding: 1 }, 'config.rateLimit.onExceeding', '500,429'],
    ["onExceeded: 'x' (a 500 on every refusal)", { onExceeded: 'x' }, 'config.rateLimit.onExceeded', '200,500'],
    ['allowList: 1 (a 500 on every request)', { allowList: 1 }, 'config.rateLimit.allowList', '500,500'],
    ['addHeaders: null (a 500 on every refusal)', { addHeaders: null }, 'config.rateLimit.addHeaders', '200,500'],
  ])('%s, as @fastify/rate-limit 11 answers it', async (_situation, route, option, theirs) => {
    const ours = await attempt(fastifyRateLimit, {}, route);
    expect(ours).toEqual({ thrown: expect.any(RateKitOptionError) });
    expect((ours as { thrown: RateKitOptionError }).thrown).toMatchObject({ code: 'ERR_RATEKIT_INVALID_OPTION', option });
    expect(await attempt(upstream, {}, route)).toEqual({ statuses: theirs });
  });

  it('refuses an allowList that is not a list when the plugin is registered, too', async () => {
    const ours = await attempt(fastifyRateLimit, { allowList: true }, undefined);
    expect((ours as { thrown: unknown }).thrown).toMatchObject({ code: 'ERR_RATEKIT_INVALID_OPTION', option: 'allowList' });
    expect(await attempt(upstream, { allowList: true }, undefined)).toEqual({ statuses: '500,500' });
  });
});

describe("@fastify/rate-limit mode keeps @fastify/rate-limit's fallbacks", () => {
  it.each<[string, Record<string, unknown>, Record<string, unknown> | undefined, string]>([
    ['a plugin-level onExceeding that is not a function: a no-op', { onExceeding: 1 }, undefined, '200,429'],
    ['a falsy allowList in a route: none', {}, { allowList: false }, '200,429'],
    ['a falsy allowList in the plugin: none', { allowList: 0 }, undefined, '200,429'],
  ])('%s', async (_situation, options, route, statuses) => {
    expect(await attempt(fastifyRateLimit, options, route)).toEqual({ statuses });
    expect(await attempt(upstream, options, route)).toEqual({ statuses });
  });
});
