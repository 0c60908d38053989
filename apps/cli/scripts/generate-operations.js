#!/usr/bin/env node
// Build step: the API's OpenAPI document → dist/operations.json, one entry per CLI command.
// The app is built but never listens or connects: postgres.js opens connections on first query.
import { writeFileSync } from 'node:fs'
import { buildApp } from '@commerce/api/dist/app.js'
import { loadConfig } from '@commerce/api/dist/config.js'
import { deriveOperations } from '../dist/operations.js'

const config = loadConfig({ DATABASE_URL: 'postgres://unused@127.0.0.1:1/unused', JWT_SECRET: 'o'.repeat(32) })
const app = await buildApp(config, { logger: false })
await app.ready()
const operations = deriveOperations(app.swagger())
await app.close()
writeFileSync(new URL('../dist/operations.json', import.meta.url), `${JSON.stringify(operations, null, 1)}\n`)
console.log(`dist/operations.json: ${operations.length} API operations`)
