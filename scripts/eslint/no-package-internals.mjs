// ESLint rule `ratekit/no-package-internals`: a package reaches another only through what that package
// exports.
//
// The rule: inside packages/<name>/, an import is an error when
// - it is relative and resolves into another package's folder (for example `../../core/src/keys`), or
// - it names `@ratekit/<other>/<subpath>` and <subpath> is not in that package's `exports` map.
// Why: the published packages are built one by one; a path into another package's sources or dist works in
// the monorepo (tsconfig paths, jest's mapper) and breaks, or silently duplicates code, once installed. What
// one package needs from another must be part of that package's public API, documented and versioned.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../..');
const packagesDir = path.join(root, 'packages');

/** `@ratekit/<name>` -> the subpaths its package.json exports (`.` and `./upstash`, say), read once. */
function readExports() {
  const out = new Map();
  for (const dir of readdirSync(packagesDir)) {
    let manifest;
    try {
      manifest = JSON.parse(readFileSync(path.join(packagesDir, dir, 'package.json'), 'utf8'));
    } catch {
      continue;
    }
    out.set(manifest.name, new Set(Object.keys(manifest.exports ?? { '.': null })));
  }
  return out;
}

/** The package folder (packages/<name>) a file belongs to, or undefined outside packages/. */
function packageOf(filename) {
  const relative = path.relative(packagesDir, filename);
  if (relative.startsWith('..') || path.isAbsolute(relative)) return undefined;
  return path.join(packagesDir, relative.split(path.sep)[0]);
}

/** @type {import('eslint').Rule.RuleModule} */
export const noPackageInternals = {
  meta: {
    type: 'problem',
    docs: { description: "a package imports another only through that package's exports" },
    schema: [],
    messages: {
      relative: "'{{source}}' reaches into {{pkg}}: import the other package by its name and its public exports instead",
      subpath: "'{{source}}' is not exported by {{name}} (its exports: {{exported}})",
    },
  },
  create(context) {
    const own = packageOf(context.filename);
    if (own === undefined) return {};
    const exportsByName = readExports();
    const check = (node) => {
      const source = node.source?.value;
      if (typeof source !== 'string') return;
      if (source.startsWith('.')) {
        const target = path.resolve(path.dirname(context.filename), source);
        const targetPackage = packageOf(target);
        if (targetPackage !== undefined && targetPackage !== own) {
          context.report({ node: node.source, messageId: 'relative', data: { source, pkg: path.relative(root, targetPackage) } });
        }
        return;
      }
      const match = /^(@ratekit\/[a-z0-9-]+)(\/.*)?$/.exec(source);
      if (!match) return;
      const exported = exportsByName.get(match[1]);
      if (exported === undefined) return; // not a workspace package: TypeScript reports a missing module
      const subpath = `.${match[2] ?? ''}`;
      if (!exported.has(subpath)) {
        context.report({ node: node.source, messageId: 'subpath', data: { source, name: match[1], exported: [...exported].join(', ') } });
      }
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check };
  },
};

export default { rules: { 'no-package-internals': noPackageInternals } };
