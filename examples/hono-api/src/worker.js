// The example API as a Cloudflare Worker (run locally on workerd: `pnpm demo hono-workerd` bundles this file with
// esbuild and serves it with workerd.capnp). The app, its limiters and their memory store are made at module
// scope, as Workers code usually makes them: nothing there starts a timer. On Cloudflare the client address is
// `cf-connecting-ip`, which Cloudflare's edge sets; locally there is no edge, so the demo sends that header itself.
import { getConnInfo } from 'hono/cloudflare-workers';
import { createApp } from './app.js';

export default createApp({ getConnInfo });
