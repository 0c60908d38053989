/**
 * The committed contract (openapi.json) makes a typed client: openapi-typescript generates its
 * types, and a small client written against them compiles — components by name, operations by
 * operationId, webhook bodies by event kind — while code the contract does not allow does not.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import openapiTS, { astToString } from 'openapi-typescript'
import ts from 'typescript'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'

const CONTRACT = new URL('../../../openapi.json', import.meta.url)

/** A client's use of the generated types: each line compiles only if the contract says so. */
const CLIENT = `
import type { components, operations, webhooks } from './contract'

type Order = components['schemas']['Order']
export const status: Order['status'] = 'paid'
export const line: Order['items'][number]['quantity'] = 2

type CompleteCheckout = operations['completeCheckout']
export const body: CompleteCheckout['requestBody']['content']['application/json'] = { payment: { method: 'card', token: 'tok_visa' } }
export const placed = (answer: CompleteCheckout['responses'][201]['content']['application/json']): Order => answer
export const pending = (answer: CompleteCheckout['responses'][202]['content']['application/json']): string => answer.reserved_until
export const key: CompleteCheckout['parameters']['header']['idempotency-key'] = 'a-key-of-16-chars-or-more'

export const code: components['schemas']['Error']['error']['code'] = 'insufficient_inventory'
export const product = (created: operations['createProduct']['responses'][201]['content']['application/json']) => created.variants[0]?.sku
export const selection: NonNullable<operations['getProduct']['parameters']['query']>['fields'] = 'title,variants.sku'

type Paid = webhooks['order.paid']['post']['requestBody']['content']['application/json']
export const onPaid = (event: Paid): [string, number] => [event.event, event.data.total]

export function onAny(event: components['schemas']['WebhookEvent']): string | undefined {
  switch (event.event) {
    case 'order.shipped':
      return event.data.fulfillment.carrier
    case 'order.refunded':
      return String(event.data.refund.amount)
    case 'product.updated':
      return event.data.variants[0]?.title
    default:
      return event.resource_id
  }
}
`

/** What the contract refuses, one line each: the line numbers of the errors are the expected ones. */
const WRONG = [
  `import type { components, operations, webhooks } from './contract'`,
  `export const status: components['schemas']['Order']['status'] = 'shipping'`,
  `export const code: components['schemas']['Error']['error']['code'] = 'no_such_code'`,
  `export type Missing = operations['postCheckoutsIdComplete']`,
  `export const data = (event: webhooks['order.paid']['post']['requestBody']['content']['application/json']) => event.data.fulfillment`,
  `export const body: operations['createProduct']['requestBody']['content']['application/json'] = { price: 1 }`,
].join('\n')

let dir: string

/** The compiler's errors for `source` beside the generated types, as `<file>:<line>: <message>`. */
function compile(source: string): string[] {
  const file = join(dir, 'client.ts')
  writeFileSync(file, source)
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2022.d.ts'],
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    types: [],
  })
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const where = diagnostic.file && diagnostic.start !== undefined ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line + 1 : 0
    return `${diagnostic.file?.fileName.split('/').at(-1) ?? ''}:${where}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`
  })
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'contract-client-'))
  writeFileSync(join(dir, 'contract.ts'), astToString(await openapiTS(CONTRACT)))
}, 60_000)
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('a client generated from openapi.json with openapi-typescript', () => {
  test('compiles against components by name, operations by operationId and webhook bodies by kind', () => {
    expect(compile(CLIENT)).toEqual([])
  })

  test('refuses what the contract does not allow: an unknown status or error code, a path-made name, a field of another kind, a body without its required field', () => {
    const errors = compile(WRONG)
    expect(errors.map((error) => error.split(': ')[0])).toEqual(['client.ts:2', 'client.ts:3', 'client.ts:4', 'client.ts:5', 'client.ts:6'])
    expect(errors[0]).toMatch(/"shipping"/)
    expect(errors[1]).toMatch(/"no_such_code"/)
    expect(errors[2]).toMatch(/postCheckoutsIdComplete/)
    expect(errors[3]).toMatch(/fulfillment/)
    expect(errors[4]).toMatch(/title/)
  })
})
