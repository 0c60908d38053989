/**
 * A database of its own for a benchmark run, on the DATABASE_URL server (else the embedded
 * cluster): created empty and migrated, dropped by `drop()`.
 */
import postgres from 'postgres'
import { migrate, openDatabase } from '@commerce/db'

export async function openScratchDatabase(name) {
  const opened = await openDatabase({ url: process.env.DATABASE_URL, dataDir: process.env.COMMERCE_DATA_DIR, database: 'postgres' })
  const admin = postgres(opened.url, { max: 1, onnotice: () => {} })
  await admin.unsafe(`drop database if exists ${name} with (force)`)
  await admin.unsafe(`create database ${name}`)
  const url = Object.assign(new URL(opened.url), { pathname: `/${name}` }).toString()
  await migrate(url)
  return {
    url,
    async drop() {
      await admin.unsafe(`drop database if exists ${name} with (force)`)
      await admin.end()
      await opened.stop()
    },
  }
}
