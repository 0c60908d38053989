import { defineProject } from 'vitest/config'

export default defineProject({
  test: {
    name: 'client',
    include: ['test/**/*.test.ts'],
    globalSetup: ['./test/global-setup.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
})
