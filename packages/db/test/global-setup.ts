import type { TestProject } from 'vitest/node'
import { startTestDatabaseServer } from '../src/testing.js'

declare module 'vitest' {
  export interface ProvidedContext {
    /** The test server's maintenance database, for creating and dropping databases. */
    adminUrl: string
    /** The migrated template each test file clones. */
    template: string
  }
}

export default async function setup(project: TestProject) {
  const server = await startTestDatabaseServer('db')
  project.provide('adminUrl', server.adminUrl)
  project.provide('template', server.template)
  return () => server.teardown()
}
