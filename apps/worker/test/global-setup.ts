/** One PostgreSQL for the run (DATABASE_URL, else embedded) with a migrated template to clone. */
import type { TestProject } from 'vitest/node'
import { startTestDatabaseServer } from '@commerce/db/testing'

declare module 'vitest' {
  export interface ProvidedContext {
    adminUrl: string
    template: string
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startTestDatabaseServer('worker')
  project.provide('adminUrl', server.adminUrl)
  project.provide('template', server.template)
  return () => server.teardown()
}
