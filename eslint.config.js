// Lint rules that typecheck does not cover: the module boundaries of CONVENTIONS.md and the
// single place that reads the environment.
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

const boundaries = {
  patterns: [
    { group: ['**/apps/*', '@commerce/api', '@commerce/worker', '@commerce/cli'], message: 'Apps never import each other.' },
    { group: ['@commerce/*/src/*', '@commerce/*/dist/*'], message: 'Import a package by its declared exports only.' },
  ],
}

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/.data/**', '**/*.js', '!eslint.config.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      'no-restricted-imports': ['error', boundaries],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['packages/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [...boundaries.patterns, { group: ['@commerce/api', '@commerce/worker', '@commerce/cli'], message: 'Packages never import apps.' }] },
      ],
    },
  },
  {
    files: ['apps/*/src/**/*.ts'],
    ignores: ['apps/*/src/config.ts'],
    rules: {
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Read configuration in config.ts only.' }],
    },
  },
)
