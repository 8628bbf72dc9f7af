// One lint configuration for the repository (docs/contributing.md). Rules that
// find defects, plus the layer table (scripts/eslint-layers.js); formatting is
// prettier's job, so no stylistic rules here.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import layers from './scripts/eslint-layers.js';

const nodeGlobals = Object.fromEntries(['process', 'console', 'Buffer', 'URL', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'setImmediate'].map((g) => [g, 'readonly']));

export default tseslint.config(
  // Generated codecs are checked by `npm run gen:check`; their generator is linted.
  { ignores: ['node_modules/', 'dist/', '.cache/', 'bench-results/', '**/target/', 'compat/go/', 'compat/java/', 'src/protocol/messages/'] },
  { linterOptions: { reportUnusedDisableDirectives: 'error' } },
  { files: ['**/*.js', '**/*.mjs'], extends: [js.configs.recommended], languageOptions: { globals: nodeGlobals } },
  {
    files: ['**/*.ts', '**/*.cts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    // Type-aware, for the promise rules: an un-awaited promise loses its error and its ordering.
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { pgkafka: layers },
    rules: {
      'pgkafka/layers': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // Rollback carries a transaction's result out of its callback (storage/pg/pool.ts); it is not a failure.
      '@typescript-eslint/only-throw-error': ['error', { allow: [{ from: 'file', name: 'Rollback' }] }],
      // A leading underscore marks a value kept for its position (an ignored argument, a destructured slot).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  // The broker logs through pino (src/observability/logger.ts), never the console.
  { files: ['src/**/*.ts', 'src/**/*.cts'], rules: { 'no-console': 'error' } },
  // Tests build and decode arbitrary messages (golden bytes, fuzzing, round trips); elsewhere an `any` says why.
  { files: ['test/**/*.ts'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
);
