// The Hono servers of the HTTP part: one app served the way its runtime serves Hono. On Node,
// @hono/node-server (what `pnpm demo hono` runs); on Bun, Bun.serve with app.fetch (the way Bun apps run
// Hono). The client address, which the limiters key by, comes from the runtime's getConnInfo.
import { HOST } from './http-server.mjs';

/** The runtime's getConnInfo (hono/bun or @hono/node-server/conninfo). */
export async function connInfoHelper() {
  if (globalThis.Bun !== undefined) return (await import('hono/bun')).getConnInfo;
  return (await import('@hono/node-server/conninfo')).getConnInfo;
}

/**
 * Serves a Hono app on loopback, port chosen by the OS.
 * @returns {Promise<{ port: number, close: () => Promise<void> }>}
 */
export async function serveHono(app) {
  if (globalThis.Bun !== undefined) {
    const server = globalThis.Bun.serve({ fetch: app.fetch, port: 0, hostname: HOST });
    return { port: server.port, close: async () => server.stop(true) };
  }
  const { createAdaptorServer } = await import('@hono/node-server');
  const server = createAdaptorServer({ fetch: app.fetch });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, HOST, resolve);
  });
  return {
    port: server.address().port,
    close: () => {
      server.closeAllConnections();
      return new Promise((done) => server.close(() => done()));
    },
  };
}
