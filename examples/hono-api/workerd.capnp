# workerd config for the example Worker: `workerd serve workerd.capnp --socket-addr http=127.0.0.1:8787`
# after bundling src/worker.js to dist/worker.js (examples/demo.mjs does both for `pnpm demo hono-workerd`).
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [(name = "main", worker = .worker)],
  sockets = [(name = "http", address = "127.0.0.1:8787", http = (), service = "main")],
);

const worker :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "dist/worker.js")],
  compatibilityDate = "2026-11-01",
);
