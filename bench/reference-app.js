/**
 * The yardsticks for the benchmark: a minimal hand-written Fastify + postgres.js app on the same
 * tables, with nothing between the route and the query.
 *
 *   GET /naive/products?page&per_page&search&category   the textbook list: an exact count(*) and
 *       OFFSET on every request, search by ILIKE '%word%' over title and description
 *   GET /pk/products/:id                                one product row by primary key (the ceiling)
 *   POST /ref/checkout {product_id}                     the minimal order transaction: a guarded
 *       stock update and an order insert, nothing else
 *
 *   DATABASE_URL=... PORT=3901 node bench/reference-app.js
 */
import Fastify from 'fastify'
import postgres from 'postgres'

const url = process.env.DATABASE_URL
if (!url) throw new Error('DATABASE_URL is required')
const port = Number(process.env.PORT ?? 3901)
const host = process.env.HOST ?? '127.0.0.1'
// The same pool size as the API's default (DATABASE_POOL_MAX), so neither side gets more connections.
const sql = postgres(url, { max: Number(process.env.DATABASE_POOL_MAX ?? 10), onnotice: () => {} })

const COLUMNS = sql`
  p.id, p.title, p.slug, p.description, p.sku, p.price_minor, p.currency, p.inventory_quantity,
  p.weight, p.weight_unit, p.is_active, p.image_url, p.created_at, p.updated_at`

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const toProduct = (row) => ({
  id: row.id,
  title: row.title,
  slug: row.slug,
  description: row.description,
  sku: row.sku,
  price_minor: Number(row.price_minor),
  currency: row.currency,
  inventory_quantity: row.inventory_quantity,
  weight: row.weight === null ? null : Number(row.weight),
  weight_unit: row.weight_unit,
  is_active: row.is_active,
  image_url: row.image_url,
  created_at: row.created_at,
  updated_at: row.updated_at,
})

const positive = (value, fallback, max) => {
  const n = Number(value)
  return Number.isInteger(n) && n >= 1 ? Math.min(n, max) : fallback
}

const app = Fastify({ logger: false })

app.get('/health', async () => ({ status: 'ok' }))

app.get('/naive/products', async (request) => {
  const query = request.query
  const page = positive(query.page, 1, 1_000_000)
  const perPage = positive(query.per_page, 20, 100)
  const search = typeof query.search === 'string' && query.search.trim() !== '' ? query.search.trim() : undefined
  const category = typeof query.category === 'string' && query.category !== '' ? query.category : undefined

  const pattern = search && `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
  const from = category
    ? sql`products p join product_categories pc on pc.product_id = p.id join categories c on c.id = pc.category_id`
    : sql`products p`
  const where = sql`where p.is_active
    ${category ? sql`and c.slug = ${category}` : sql``}
    ${pattern ? sql`and (p.title ilike ${pattern} or p.description ilike ${pattern})` : sql``}`

  const [{ total }] = await sql`select count(*)::int as total from ${from} ${where}`
  const rows = await sql`
    select ${COLUMNS} from ${from} ${where}
    order by p.id desc limit ${perPage} offset ${(page - 1) * perPage}`
  return {
    products: rows.map(toProduct),
    meta: { page, per_page: perPage, total, total_pages: Math.ceil(total / perPage) },
  }
})

app.get('/pk/products/:id', async (request, reply) => {
  const { id } = request.params
  if (!UUID.test(id)) return reply.code(404).send({ error: 'not_found' })
  const [row] = await sql`select ${COLUMNS} from products p where p.id = ${id}`
  if (!row) return reply.code(404).send({ error: 'not_found' })
  return toProduct(row)
})

app.post('/ref/checkout', async (request, reply) => {
  const productId = request.body?.product_id
  if (typeof productId !== 'string' || !UUID.test(productId)) return reply.code(400).send({ error: 'product_id' })
  const order = await sql.begin(async (tx) => {
    const [product] = await tx`
      update products set inventory_quantity = inventory_quantity - 1
      where id = ${productId} and inventory_quantity >= 1
      returning price_minor, currency`
    if (!product) return undefined
    const [row] = await tx`
      insert into orders (id, email, currency, subtotal_minor, discount_minor, tax_minor, shipping_minor, total_minor)
      values (gen_random_uuid(), 'bench@example.com', ${product.currency}, ${product.price_minor}, 0, 0, 0, ${product.price_minor})
      returning id, order_number`
    return row
  })
  if (!order) return reply.code(409).send({ error: 'insufficient_inventory' })
  return reply.code(201).send(order)
})

const shutdown = async () => {
  await app.close()
  await sql.end({ timeout: 5 })
  process.exit(0)
}
process.once('SIGTERM', shutdown)
process.once('SIGINT', shutdown)

await app.listen({ port, host })
