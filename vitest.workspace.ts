// Every package and app is a vitest project with its own vitest.config.ts; `vitest run` at the root runs them all.
export default ['packages/*', 'apps/*']
