import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'data/', 'node_modules/', 'coverage/', 'packages/client/src/generated/', 'packages/client/dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  {
    // A LockedWorkspace proves the workspace lock is held: only the store's lockWorkspace makes one.
    files: ['**/*.ts'],
    ignores: ['src/store/sql/queue-queries.ts', 'src/store/locked-workspace.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/locked-workspace.js'], importNames: ['sealLock'], message: 'Only QueueStore.lockWorkspace hands out a LockedWorkspace.' }] },
      ],
    },
  },
);
