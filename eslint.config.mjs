// ESLint for the workspace (`pnpm lint`, step 2 of `pnpm test`).
//
// Two tiers, so the lint stays quick on a small machine:
// - the TypeScript the root tsconfig.json compiles (packages/*/src, test/) gets typescript-eslint's
//   type-aware rules, from one TypeScript program (the root tsconfig maps @ratekit/* to the sources,
//   so nothing needs building first);
// - everything else (bench/, examples/, scripts/, the upstream runners, configs) gets the rules that need
//   no types: syntax-level mistakes, undefined names, unused variables.
// The rules chosen are the ones that catch real bugs in a rate limiter: a promise nobody awaits (a store
// call whose failure `onStoreError` never sees), a promise where a callback was expected, an `any` that
// silently turns off the type check, and conditions that can never change (dead fallbacks).
// Formatting is Prettier's business (`pnpm format`), not ESLint's.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import ratekit from './scripts/eslint/no-package-internals.mjs';

const typed = ['packages/*/src/**/*.ts', 'test/**/*.ts'];

export default defineConfig(
  {
    ignores: ['**/node_modules/', '**/dist/', '**/coverage/', '**/.upstream/', 'bench/.exp/', 'bench/.against/', 'bench/.proto/', '.tmp/', '**/.next/', '**/next-env.d.ts'],
  },
  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
  },

  // Every JavaScript file: the recommended set, with Node's globals.
  {
    files: ['**/*.{js,mjs,cjs}'],
    extends: [js.configs.recommended],
    languageOptions: { ecmaVersion: 2024, globals: { ...globals.node } },
    rules: {
      'no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
    },
  },
  {
    files: ['**/*.cjs', 'jest.config.js'],
    languageOptions: { sourceType: 'commonjs' },
  },

  // TypeScript outside the root program (examples' tests, tsup configs): the rules that need no types.
  {
    files: ['**/*.ts'],
    ignores: typed,
    extends: [js.configs.recommended, tseslint.configs.recommended],
    languageOptions: { globals: { ...globals.node, ...globals.jest } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },

  // The root program: type-aware rules.
  {
    files: typed,
    extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { project: ['./tsconfig.json'], tsconfigRootDir: import.meta.dirname },
      globals: { ...globals.node, ...globals.jest },
    },
    rules: {
      // Promises: every store call is awaited, returned, or explicitly dropped with `void`.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/return-await': ['error', 'in-try-catch'],
      // Off: an `async` function without `await` is how a store method turns a synchronous throw into a
      // rejection that `onStoreError` sees, and how a test double implements a Promise-returning interface.
      '@typescript-eslint/require-await': 'off',
      // Conditions that cannot change: a fallback that never runs, or a check the types already made.
      '@typescript-eslint/no-unnecessary-condition': ['error', { allowConstantLoopConditions: 'only-allowed-literals' }],
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // `any` is an unchecked hole: no-unsafe-* are in recommendedTypeChecked.
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/only-throw-error': 'error',
      // Re-raising a caught value (typed `unknown`) or an AbortSignal's reason is right; a literal is not.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
    },
  },

  // Every package file, sources, tests, scripts and configs alike: another package only through its exports
  // (scripts/eslint/no-package-internals.mjs says why).
  {
    files: ['packages/**/*.{ts,js,mjs,cjs}'],
    plugins: { ratekit },
    rules: { 'ratekit/no-package-internals': 'error' },
  },

  // Tests: the same promise rules, but tests read untyped values on purpose (supertest's `body: any`,
  // JSON from a child process, the incumbents' CommonJS builds loaded with require() side by side with
  // ours), and their assertions check those values: the no-unsafe-* family there would only add casts.
  {
    files: ['**/*.test.ts', '**/test-support.ts', '**/test-support/*.ts', 'test/**/*.ts', 'packages/test-utils/src/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-require-imports': 'off',
      // A conformance suite hands a store's methods around as values; none of them use `this`.
      '@typescript-eslint/unbound-method': 'off',
    },
  },
);
