// Module resolution hooks for a twin contender of `pnpm bench --against <ref>` (lib/against.mjs): every
// `@ratekit/*` import resolves as if made from <root>/bench, the ref's worktree, so the app script of this
// checkout runs on the ref's built packages (and those packages' own imports, `@ratekit/core` included,
// resolve inside the ref's tree). A package the ref does not have (one added since) resolves from this checkout,
// as every other import does: it has no twin to compare.
import { pathToFileURL } from 'node:url';

let parentURL;

/** `data.root`: the ref's worktree. */
export function initialize(data) {
  parentURL = pathToFileURL(`${data.root}/bench/package.json`).href;
}

export async function resolve(specifier, context, nextResolve) {
  if (!specifier.startsWith('@ratekit/')) return nextResolve(specifier, context);
  // Copied before the first call: Node 20's hook chain writes the context it was given back into `context`.
  const own = { ...context };
  try {
    return await nextResolve(specifier, { ...context, parentURL });
  } catch (error) {
    if (error?.code === 'ERR_MODULE_NOT_FOUND') return nextResolve(specifier, own);
    throw error;
  }
}
