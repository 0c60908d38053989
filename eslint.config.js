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

// Statement text in an app: it belongs in packages/db/src/sql (docs/internals.md, "Where SQL lives").
// Our SQL is lowercase; the Drizzle builder's small expressions (lower(), now(), case) pass.
const SQL_TEXT = String.raw`/^\s*select\s|\b(select\s[\s\S]*\sfrom|with\s+\w+\s+as\s+(materialized\s+)?\(|insert\s+into|delete\s+from|update\s+\w+\s+set|json_build_object|json_agg|savepoint\s+\w)/`
const noSqlText = ['TemplateElement[value.raw=', 'Literal[value='].map((node) => ({
  selector: `${node}${SQL_TEXT}]`,
  message: 'SQL statements live in packages/db/src/sql, one operation per file; call its function instead.',
}))

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
  {
    files: ['apps/*/src/**/*.ts'],
    rules: { 'no-restricted-syntax': ['error', ...noSqlText] },
  },
)
