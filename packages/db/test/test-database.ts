/** A database of this test file's own, cloned from the migrated template (or empty), with a client on it. */
import { expect, inject } from 'vitest'
import { createDb, type DatabaseHandle } from '../src/client.js'
import { createTestDatabase } from '../src/testing.js'

export interface OpenTestDatabase extends DatabaseHandle {
  url: string
  /** Closes the client and drops the database. */
  dispose(): Promise<void>
}

export async function openTestDatabase(options: { empty?: boolean } = {}): Promise<OpenTestDatabase> {
  const template = options.empty ? 'template0' : inject('template')
  const database = await createTestDatabase(inject('adminUrl'), template)
  const handle = createDb({ url: database.url, poolMax: 5, applicationName: 'commerce-db-test' })
  return {
    ...handle,
    url: database.url,
    async dispose() {
      await handle.close()
      await database.drop()
    },
  }
}

/** The error `work` rejects with; fails the test if it resolves. */
export async function rejection(work: Promise<unknown>): Promise<unknown> {
  return work.then(
    () => expect.unreachable('the call succeeded'),
    (error: unknown) => error,
  )
}

/** The PostgreSQL error behind a failed query, whether Drizzle wrapped it or not. */
export async function postgresError(work: Promise<unknown>): Promise<{ code: string; constraint_name?: string }> {
  const error = await rejection(work)
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error
  expect(cause).toHaveProperty('code')
  return cause as { code: string; constraint_name?: string }
}
