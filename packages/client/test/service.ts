/** The service the client's tests call: a cloned test database with an admin account, the real API process on it, the worker when asked. */
import { inject } from 'vitest'
import { createDb, createUser, type DatabaseHandle } from '@commerce/db'
import { createTestDatabase } from '@commerce/db/testing'
import { hashPassword } from '@commerce/domain'
// The processes as the CLI's tests start them: a test harness, not a runtime import.
// eslint-disable-next-line no-restricted-imports
import { startApi, startWorker, stopProcess } from '../../../apps/api/test/processes.js'
import { createClient, type CommerceClient } from '../src/index.js'

export const ADMIN = { email: 'sdk-admin@example.com', password: 'correct horse battery staple' }

export interface Service {
  baseUrl: string
  /** A client signed in as ADMIN, and its token. */
  admin: CommerceClient
  token: string
  /** The test database, to store what only the CLI makes (API keys). */
  handle: DatabaseHandle
  stop(): Promise<void>
}

/** `env` adds to the API process's environment. */
export async function startService(options: { env?: Record<string, string>; worker?: boolean } = {}): Promise<Service> {
  const database = await createTestDatabase(inject('adminUrl'), inject('template'))
  const handle = createDb({ url: database.url, poolMax: 2 })
  await createUser(handle.db, { email: ADMIN.email, passwordHash: await hashPassword(ADMIN.password, 1024), role: 'admin' })
  const { baseUrl, process: api } = await startApi(database.url, options.env)
  const worker = options.worker ? startWorker(database.url) : undefined
  const admin = createClient({ baseUrl })
  const { token } = await admin.signIn(ADMIN)
  return {
    baseUrl,
    admin,
    token,
    handle,
    async stop() {
      await Promise.all([stopProcess(api), stopProcess(worker)])
      await handle.close()
      await database.drop()
    },
  }
}
