/**
 * The client's types, as a TypeScript user gets them from the built .d.ts files: methods by
 * operationId with the document's bodies, query parameters and answers compile, and what the
 * contract does not allow does not. And a query parameter the document gains reaches its method
 * once the client is generated again, with no change to the client's code.
 */
import { execFileSync } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { beforeAll, describe, expect, test } from 'vitest'

const DIST = fileURLToPath(new URL('../dist', import.meta.url))
const IMPORTS = `import { createClient, CommerceError, type Schemas } from '${DIST}/index.js'
import { constructWebhookEvent } from '${DIST}/webhooks.js'
const client = createClient({ baseUrl: 'http://localhost:3000', auth: { apiKey: 'ck_example' } })
`

/** A storefront's use of the client: each line compiles only if the contract says so. */
const CLIENT = `${IMPORTS}
export async function shop(): Promise<string> {
  const product = await client.createProduct({ title: 'Mug', price: 9.5, currency: 'EUR' })
  const cart = await client.createCart({ currency: 'EUR' })
  await client.addCartItem(cart.id, { product_id: product.id, quantity: 1 })
  const answer = await client.completeCheckout('id', { payment: { method: 'card', token: 'tok_visa' } }, { idempotencyKey: 'my-key-0123456789' })
  const placed: Schemas['Order'] | Schemas['CheckoutPaymentPending'] = answer
  let newest: string = 'order_number' in placed ? placed.order_number : placed.reserved_until
  for await (const order of client.paginate('listOrders', { per_page: 100, status: 'paid' }).items()) newest = order.order_number
  const page = await client.listProducts({ search: ['mug', 'cup'], per_page: 10 })
  try {
    await client.deleteProduct(product.id)
  } catch (error) {
    if (error instanceof CommerceError && error.code === 'insufficient_inventory') return error.details[0]?.field ?? ''
  }
  for await (const event of client.streamEvents({ events: ['order.*', 'product.created'], WebSocket: globalThis.WebSocket })) {
    if (event.event === 'order.shipped') return event.data.fulfillment.carrier
  }
  const delivered = constructWebhookEvent('{}', new Headers(), 'whsec_secret')
  if (delivered.event === 'order.paid') return String(delivered.data.total)
  return page.products[0]?.title ?? newest
}
`

/** What the contract refuses, one line each (after the three of IMPORTS): the line numbers of the errors are the expected ones. */
const WRONG = [
  `await client.createProduct({ price: 1 })`,
  `await client.completeCheckout('id', { payment: { method: 'card' } })`,
  `await client.deleteProduct()`,
  `await client.listProducts({ colour: 'red' })`,
  `await client.deleteProduct('id', { idempotencyKey: 'not-taken-here-0001' })`,
  `client.paginate('getProduct', 'id')`,
  `client.streamEvents({ events: ['order.shiped'] })`,
  `export const code: CommerceError['code'] = 'no_such_code'`,
]

const PACKAGE = fileURLToPath(new URL('..', import.meta.url))
const CONTRACT = join(PACKAGE, '../../openapi.json')
type File = 'right' | 'wrong' | 'regenerated'
let errors: Record<File, string[]>

/**
 * The client's source beside a copy of the contract in which getProduct takes `fields` (as a
 * comma-separated string, unless the contract has it already), generated as the build does:
 * its index.ts, to import.
 */
function regeneratedClient(dir: string): string {
  const document = JSON.parse(readFileSync(CONTRACT, 'utf8')) as { paths: Record<string, { get: { parameters?: { name: string }[] } }> }
  const getProduct = document.paths['/api/v1/products/{id}']!.get
  getProduct.parameters ??= []
  if (!getProduct.parameters.some((parameter) => parameter.name === 'fields')) {
    getProduct.parameters.push({ in: 'query', name: 'fields', required: false, schema: { type: 'string', maxLength: 1000 } } as never)
  }
  writeFileSync(join(dir, 'openapi.json'), JSON.stringify(document))
  cpSync(join(PACKAGE, 'src'), join(dir, 'src'), { recursive: true, filter: (source) => !source.includes('generated') })
  execFileSync(process.execPath, [join(PACKAGE, 'scripts/generate.js'), join(dir, 'openapi.json'), join(dir, 'src/generated')], { stdio: 'pipe' })
  return join(dir, 'src/index.js')
}

/** One compiler run for every file (each run takes seconds): its errors per file, as `<line>: <message>`. */
function compile(dir: string, sources: Record<File, string>): Record<File, string[]> {
  const files = Object.entries(sources).map(([name, source]) => {
    writeFileSync(join(dir, `${name}.ts`), source)
    return join(dir, `${name}.ts`)
  })
  const program = ts.createProgram(files, {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts', 'lib.dom.asynciterable.d.ts'],
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    types: [],
  })
  const found: Record<File, string[]> = { right: [], wrong: [], regenerated: [] }
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const name = (Object.keys(found) as File[]).find((file) => diagnostic.file?.fileName === join(dir, `${file}.ts`)) ?? 'right'
    const line = diagnostic.file && diagnostic.start !== undefined ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line + 1 : 0
    found[name].push(`${line}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`)
  }
  return found
}

beforeAll(() => {
  const dir = mkdtempSync(join(tmpdir(), 'commerce-client-types-'))
  try {
    const regenerated = regeneratedClient(dir)
    errors = compile(dir, {
      right: CLIENT,
      wrong: `${IMPORTS}${WRONG.join('\n')}\n`,
      regenerated: [
        `import { createClient } from '${regenerated}'`,
        `const client = createClient({ baseUrl: 'http://localhost:3000' })`,
        `export const chosen = await client.getProduct('id', { fields: ['id', 'title'] })`,
        `export const joined = await client.getProduct('id', { fields: 'id,title' }, { retry: false })`,
        `export const misspelt = await client.getProduct('id', { field: 'id' })`,
      ].join('\n'),
    })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}, 120_000)

describe('the client’s types (dist/*.d.ts)', () => {
  test('compile a storefront’s calls: bodies, query parameters, answers, errors, stream and webhook events', () => {
    expect(errors.right).toEqual([])
  })

  test('refuse a body without its required field, a missing path parameter, an unknown query parameter or option, a non-list to paginate, an unknown event kind or error code', () => {
    const wrong = errors.wrong
    expect(wrong.map((error) => Number(error.split(':')[0]))).toEqual([4, 5, 6, 7, 8, 9, 10, 11])
    expect(wrong[0]).toMatch(/'title' is missing/)
    expect(wrong[1]).toMatch(/'token' is missing/)
    expect(wrong[2]).toMatch(/Expected 1-2 arguments, but got 0/)
    expect(wrong[3]).toMatch(/'colour' does not exist/)
    expect(wrong[4]).toMatch(/'idempotencyKey' does not exist/)
    expect(wrong[5]).toMatch(/"getProduct"/)
    expect(wrong[6]).toMatch(/"order.shiped"/)
    expect(wrong[7]).toMatch(/"no_such_code"/)
  })

  test('take a query parameter the document gains (getProduct’s `fields`) once generated again, an array of strings included', () => {
    expect(errors.regenerated).toHaveLength(1)
    expect(errors.regenerated[0]).toMatch(/^5: .*'field' does not exist/)
  })
})
