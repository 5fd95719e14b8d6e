/** Jest runs the TypeScript sources directly (no build), with @ratekit/* mapped to packages/<name>/src. */
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.(t|j)sx?$': ['@swc/jest'] },
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    '^@ratekit/([a-z-]+)$': '<rootDir>/packages/$1/src/index.ts' },
  testMatch: ['<rootDir>/packages/*/src/**/*.test.ts', '<rootDir>/test/**/*.test.ts', '<rootDir>/examples/*/src/**/*.test.ts'],
  // Fastify 5's inject loads cookie@2, which ships ESM only: let the transform compile it.
  transformIgnorePatterns: ['/node_modules/(?!(\\.pnpm/cookie@[^/]+/node_modules/)?cookie/)'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
};
