// `NODE_OPTIONS=--import <this file>`: appends the URL of each module of ours or of OpenTelemetry
// the process imports to the file RECORD_LOADS_TO names (tracing.test.ts: what loads with traces
// off and on). Only those: a line for each of the thousands of modules slows start-up down.
import { appendFileSync } from 'node:fs'
import process from 'node:process'
import { register } from 'node:module'
import { isMainThread } from 'node:worker_threads'

// Module hooks run in a thread of their own, which loads this file again.
if (isMainThread) register(import.meta.url)

export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context)
  if (/runtime\/dist|node_modules\/(@opentelemetry|@fastify\/otel)\//.test(resolved.url)) appendFileSync(process.env.RECORD_LOADS_TO, `${resolved.url}\n`)
  return resolved
}
