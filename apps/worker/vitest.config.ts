import { defineProject } from 'vitest/config'

export default defineProject({
  test: {
    name: 'worker',
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    globalSetup: './test/global-setup.ts',
  },
})
