import { configDefaults, defineProject } from 'vitest/config'

// `pnpm test:debian` runs the tests that need Debian's chromium or promtool (not the README's `pnpm test`).
const debianTools = process.env.TEST_DEBIAN_TOOLS === '1'

export default defineProject({
  test: {
    name: 'api',
    include: debianTools ? ['test/**/*.debian.test.ts'] : ['test/**/*.test.ts'],
    exclude: debianTools ? configDefaults.exclude : [...configDefaults.exclude, 'test/**/*.debian.test.ts'],
    globalSetup: ['./test/global-setup.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
})
