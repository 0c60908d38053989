import { defineProject } from 'vitest/config'

// The dashboard's tests drive Debian's Chromium: `pnpm test:debian` runs them (with the API and
// worker tests that need Debian's tools); the README's `pnpm test` runs the unit tests.
const debianTools = process.env.TEST_DEBIAN_TOOLS === '1'

export default defineProject({
  test: {
    name: 'admin',
    include: debianTools ? ['test/**/*.debian.test.ts'] : ['test/**/*.test.ts'],
    exclude: debianTools ? [] : ['test/**/*.debian.test.ts'],
    globalSetup: debianTools ? ['./test/global-setup.ts'] : [],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
})
