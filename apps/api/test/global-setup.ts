import type { TestProject } from 'vitest/node'
import { startTestDatabaseServer } from '@commerce/db/testing'

declare module 'vitest' {
  export interface ProvidedContext {
    databaseAdminUrl: string
    databaseTemplate: string
  }
}

export default async function setup(project: TestProject) {
  const server = await startTestDatabaseServer('api')
  project.provide('databaseAdminUrl', server.adminUrl)
  project.provide('databaseTemplate', server.template)
  return () => server.teardown()
}
