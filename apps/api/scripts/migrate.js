#!/usr/bin/env node
// The migration job of a deployment (`node scripts/migrate.js` in the API's deploy folder or
// image): applies pending migrations, Graphile Worker's schema included, to DATABASE_URL and
// exits. The API also migrates on start under the same advisory lock, so a job that runs first
// only makes a rollout's instances find nothing left to do.
import { migrate, redactUrl } from '@commerce/db'

const url = process.env.DATABASE_URL?.trim()
if (!url || !/^postgres(ql)?:\/\//.test(url)) {
  console.error('DATABASE_URL must be set to a postgres:// or postgresql:// URL')
  process.exit(1)
}
const started = Date.now()
try {
  await migrate(url)
} catch (error) {
  console.error(`Migrations failed on ${redactUrl(url)}:`, error)
  process.exit(1)
}
console.log(`Migrations applied to ${redactUrl(url)} in ${Date.now() - started} ms`)
