/** Jest runs the TypeScript sources directly (no build), with @ratekit/* mapped to packages/<name>/src. */
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  transform: {
    // NestJS code (@ratekit/nestjs's tests, examples/nestjs-*): legacy decorators with their metadata, as Nest's own builds emit them.
    '/(packages/nestjs|examples/nestjs-[a-z-]+)/.+\\.ts$': [
      '@swc/jest',
      { jsc: { parser: { syntax: 'typescript', decorators: true }, transform: { legacyDecorator: true, decoratorMetadata: true } } },
    ],
    '^.+\\.(t|m?j)sx?$': ['@swc/jest'], // .mjs: d3-dsv, loaded by vega
  },
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    '^@ratekit/([a-z-]+)$': '<rootDir>/packages/$1/src/index.ts',
    // A package's subpath export, e.g. @ratekit/redis/upstash: packages/redis/src/upstash.ts.
    '^@ratekit/([a-z-]+)/([a-z-]+)$': '<rootDir>/packages/$1/src/$2.ts',
    // vega-canvas awaits at its top level (no CJS form); see the stub.
    '^vega-canvas$': '<rootDir>/packages/cli/test/vega-canvas-stub.cjs',
  },
  testMatch: ['<rootDir>/packages/*/src/**/*.test.ts', '<rootDir>/test/**/*.test.ts', '<rootDir>/examples/*/src/**/*.test.ts'],
  // ESM-only dependencies the transform compiles: Fastify 5's inject loads cookie@2; @ratekit/cli draws
  // with vega and vega-lite, which load d3-* and a few small helpers.
  transformIgnorePatterns: ['/node_modules/(?!(\\.pnpm/[^/]+/node_modules/)?(cookie|vega[a-z-]*|d3-[a-z-]+|internmap|delaunator|robust-predicates|topojson-client|json-stringify-pretty-compact)/)'],
  // x.bun.test.ts, x.deno.test.ts, x.workerd.test.ts need their runtime (Deno KV, Durable Objects), x.edge.test.ts the
  // servers scripts/runtimes starts for Bun, Deno and workerd (on Node, a store's own jest test starts them).
  testPathIgnorePatterns: ['/node_modules/', '/dist/', '\\.(bun|deno|workerd|edge)\\.test\\.ts$'],
  // `pnpm bench --against <ref>` keeps that commit's worktree there: another copy of every package.
  modulePathIgnorePatterns: ['<rootDir>/bench/\\.against/'],
  // For each test and hook that sets none of its own. Jest's 5 s default is a budget the CPU-bound
  // property runs overshoot on a busy machine: the slowest such test takes up to 4.7 s on a quiet
  // 2-core machine (the option fuzzes, 2-4 s, timed out beside two busy processes; issue 31 §4).
  // 60 s leaves them 12 times that; a test that hangs still fails, only later.
  testTimeout: 60_000,
};
