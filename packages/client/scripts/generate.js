#!/usr/bin/env node
// Build step: the API contract (openapi.json at the repository root, committed and checked against
// the API by `pnpm openapi:check`) → src/generated/, not committed, so a contract change reaches the
// client with its next build and shows in review once, in openapi.json:
//   contract.ts    the document's types (openapi-typescript): components, operations, webhooks
//   operations.ts  the method table: per operationId, what the runtime needs to call it
// `node scripts/generate.js [document] [folder]` reads and writes elsewhere (the type tests do).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import openapiTS, { astToString } from 'openapi-typescript'

const [documentPath, outPath] = process.argv.slice(2)
const document = JSON.parse(readFileSync(documentPath ?? new URL('../../../openapi.json', import.meta.url), 'utf8'))
const out = outPath ? pathToFileURL(`${outPath}/`) : new URL('../src/generated/', import.meta.url)
const METHODS = ['get', 'put', 'post', 'patch', 'delete']
const HEADER = '// Generated from openapi.json by scripts/generate.js at build time: do not edit.\n'

/** What a local $ref (`#/components/…`) points to, or the object itself. */
const resolve = (object) => (object?.$ref ? object.$ref.split('/').slice(1).reduce((node, key) => node[key], document) : object)

/** 'required', 'optional', or undefined when there is none. */
const presence = (items) => (items.length === 0 ? undefined : items.some((item) => item.required) ? 'required' : 'optional')

/**
 * A list the client can walk: a page-mode (`page`) or cursor-mode (`after`) list whose answer is
 * `{ <items>: [...], meta }`. Undefined for anything else.
 */
function listOf(operation, query) {
  const names = query.map((parameter) => parameter.name)
  if (!names.includes('page') && !names.includes('after')) return undefined
  const answer = resolve(operation.responses['200']?.content?.['application/json']?.schema)
  const arrays = Object.entries(answer?.properties ?? {}).filter(([, schema]) => schema.type === 'array')
  if (!answer?.properties?.meta || arrays.length !== 1) throw new Error(`${operation.operationId}: a list whose answer is not { <items>: [...], meta }`)
  return { items: arrays[0][0], cursor: names.includes('after') }
}

/** One row of the method table: the runtime's whole knowledge of an operation. */
function specOf(path, method, operation) {
  // Shared parameters (`fields`) are references to components.parameters.
  const parameters = (operation.parameters ?? []).map(resolve)
  const query = parameters.filter((parameter) => parameter.in === 'query')
  const spec = {
    method: method.toUpperCase(),
    path,
    // In the order the path names them: the method's leading arguments.
    pathParams: [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]),
  }
  // A JSON body is always sent as JSON, even where another form is also accepted (the OAuth token).
  if (operation.requestBody?.content?.['application/json']) spec.body = operation.requestBody.required ? 'required' : 'optional'
  if (query.length > 0) spec.query = presence(query)
  // Array parameters repeat their name (`tag=a&tag=b`); a string one given a list joins it with commas (`fields`).
  const repeated = query.filter((parameter) => parameter.schema?.type === 'array').map((parameter) => parameter.name)
  if (repeated.length > 0) spec.repeated = repeated
  const idempotencyKey = parameters.filter((parameter) => parameter.in === 'header' && parameter.name.toLowerCase() === 'idempotency-key')
  if (idempotencyKey.length > 0) spec.idempotencyKey = presence(idempotencyKey)
  const list = listOf(operation, query)
  if (list) spec.list = list
  // The WebSocket (101 Switching Protocols) is opened by streamEvents(), not called over fetch.
  if (operation.responses['101']) spec.upgrade = true
  return spec
}

const table = {}
for (const [path, item] of Object.entries(document.paths)) {
  for (const method of METHODS) {
    const operation = item[method]
    if (!operation) continue
    if (!operation.operationId) throw new Error(`${method.toUpperCase()} ${path} has no operationId`)
    table[operation.operationId] = specOf(path, method, operation)
  }
}
const sorted = Object.fromEntries(Object.entries(table).sort(([a], [b]) => a.localeCompare(b)))

// The types need each operation's successful answers only: errors are CommerceError, whose body
// is the Error schema; response headers are not part of a method's result. Leaving them out takes
// the types from about 1 MB to a fraction of it.
const trimmed = structuredClone(document)
for (const item of Object.values(trimmed.paths)) {
  for (const method of METHODS) {
    const operation = item[method]
    if (!operation) continue
    for (const [status, response] of Object.entries(operation.responses)) {
      if (!/^[12]/.test(status)) delete operation.responses[status]
      else delete response.headers
    }
  }
}
delete trimmed.components.headers

mkdirSync(out, { recursive: true })
writeFileSync(new URL('contract.ts', out), HEADER + astToString(await openapiTS(trimmed, { defaultNonNullable: false })))
writeFileSync(
  new URL('operations.ts', out),
  `${HEADER}export const OPERATIONS = {\n${Object.entries(sorted).map(([id, spec]) => `  ${id}: ${JSON.stringify(spec)},\n`).join('')}} as const\n`,
)
console.log(`${outPath ?? 'src/generated'}/: ${Object.keys(sorted).length} operations`)
