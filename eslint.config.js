// Lint: typescript-eslint's recommended rules everywhere, plus a sandbox rule for workflow code.
// Workflow code runs in Temporal's deterministic sandbox: no Node built-ins, no I/O libraries, no zod values, and
// activities imported as types only (their implementation must never be bundled into the workflow).
const js = require('@eslint/js');
const tseslint = require('typescript-eslint');

const nodeBuiltins = require('node:module').builtinModules.flatMap((m) => [m, `node:${m}`]);

module.exports = tseslint.config(
  { ignores: ['lib/**', 'packages/*/lib/**', 'node_modules/**', '.tools/**', '.data/**', 'coverage/**', '**/*.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { prefer: 'type-imports', fixStyle: 'inline-type-imports' }],
    },
  },
  {
    files: ['src/workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, message: 'Workflow code runs in the Temporal sandbox: no Node built-ins.' })),
          patterns: [
            {
              group: ['undici', 'undici/*', '@aws-sdk/*', 'fastify', '@duckdb/*', 'csv-*', 'commander'],
              message: 'No I/O libraries in workflow code: call an activity.',
            },
            { group: ['zod', 'zod/*'], allowTypeImports: true, message: 'zod values are not sandbox-safe here; import types only.' },
            { group: ['**/activities', '**/activities/*'], allowTypeImports: true, message: 'Import activities as types only (import type).' },
            {
              group: ['@temporalio/worker', '@temporalio/client', '@temporalio/activity', '@temporalio/testing'],
              message: 'Workflow code may only use @temporalio/workflow and @temporalio/common.',
            },
            {
              group: [
                '**/storage-api',
                '**/storage-api/*',
                '**/object-storage/*',
                '**/emulator/*',
                '**/dev/*',
                '**/cli/*',
                '**/config/*',
                '**/http',
                '**/http/*',
              ],
              allowTypeImports: true,
              message: 'Only pure modules (src/contracts, src/extractor pure code, src/workflows) may be imported as values in workflows.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/activities/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/workflows', '**/workflows/*'],
              allowTypeImports: true,
              message: 'Activities and workflows meet in src/contracts: import shared types and helpers from there.',
            },
          ],
        },
      ],
    },
  },
);
