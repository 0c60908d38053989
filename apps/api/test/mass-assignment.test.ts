/**
 * Object-property-level authorization (OWASP API3), mass assignment: every write body refuses
 * fields it does not define (every object schema of every request body is closed, and the
 * validator never strips), so read-only and privileged fields — role, a line's price, an order's
 * number, status or totals — are refused with 400 wherever they are sent.
 */
import { describe, expect } from 'vitest'
import { test as it } from './helpers.js'
import { insertOrder } from './order-fixtures.js'

type Schema = Record<string, unknown>

/** The paths (`body.payment`) of object schemas in `schema` that accept properties they do not name. */
function openObjects(schema: Schema, components: Record<string, Schema>, at: string, seen = new Set<Schema>()): string[] {
  if (typeof schema.$ref === 'string') return openObjects(components[schema.$ref.replace('#/components/schemas/', '')] ?? {}, components, at, seen)
  if (seen.has(schema)) return []
  seen.add(schema)
  const found: string[] = []
  // A map (additionalProperties a schema: variant options) is a field of its own, not an open object.
  if (schema.type === 'object' && (schema.additionalProperties === undefined || schema.additionalProperties === true)) found.push(at)
  for (const [name, property] of Object.entries((schema.properties as Record<string, Schema> | undefined) ?? {})) {
    found.push(...openObjects(property, components, `${at}.${name}`, seen))
  }
  for (const key of ['items', 'additionalProperties'] as const) {
    if (typeof schema[key] === 'object' && schema[key] !== null) found.push(...openObjects(schema[key] as Schema, components, `${at}[]`, seen))
  }
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    for (const option of (schema[key] as Schema[] | undefined) ?? []) found.push(...openObjects(option, components, at, seen))
  }
  return found
}

describe('mass assignment', () => {
  it('every request body of the OpenAPI document is closed at every level', ({ ctx }) => {
    const document = ctx.app.swagger() as {
      paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema?: Schema }> } }>>
      components?: { schemas?: Record<string, Schema> }
    }
    const open: string[] = []
    let bodies = 0
    for (const [path, item] of Object.entries(document.paths)) {
      // RFC 6749 §3.2: the token endpoint must ignore parameters it does not know (it reads only its own).
      if (path === '/api/v1/oauth/token') continue
      for (const [method, operation] of Object.entries(item)) {
        for (const [type, content] of Object.entries(operation.requestBody?.content ?? {})) {
          if (!content.schema) continue
          bodies++
          open.push(...openObjects(content.schema, document.components?.schemas ?? {}, `${method.toUpperCase()} ${path} (${type}) body`))
        }
      }
    }
    expect(bodies).toBeGreaterThan(30)
    expect(open).toEqual([])
  })

  it.for([
    ['a role at sign-up', 'POST', '/api/v1/auth/register', { email: 'mallory@example.com', password: 'long enough password', role: 'admin' }, 'role'],
    ['a price on a cart line', 'POST', '/api/v1/carts/:cart/items', { product_id: '00000000-0000-7000-8000-000000000000', quantity: 1, price: 0.01 }, 'price'],
    ['an order number', 'PATCH', '/api/v1/orders/:order', { notes: 'hi', order_number: '1' }, 'order_number'],
    ['an order status', 'PATCH', '/api/v1/orders/:order', { status: 'completed' }, 'status'],
    ['order totals', 'PATCH', '/api/v1/orders/:order', { totals: { total: 0 } }, 'totals'],
    ['a customer’s user id', 'PATCH', '/api/v1/customers/me', { first_name: 'M', user_id: '00000000-0000-7000-8000-000000000000' }, 'user_id'],
  ] as const)('refuses %s with 400 naming the field, and keeps nothing', async ([_label, method, url, payload, field], { ctx, admin }) => {
    const customer = await ctx.signIn('customer')
    const cart = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: '/api/v1/carts', payload: { currency: 'USD' } })
    const { order } = await insertOrder(ctx)
    const token = url.includes('/orders/') ? admin : customer.token
    const before = await ctx.handle.sql`select (select count(*) from users) as users, (select count(*) from cart_items) as lines,
      (select md5(string_agg(o::text, ',')) from orders o) as orders, (select md5(string_agg(c::text, ',')) from customers c) as customers`
    const error = await ctx.expectError(400, 'validation_error', {
      method,
      url: url.replace(':cart', cart.id).replace(':order', order.id),
      token,
      payload,
    })
    expect(JSON.stringify(error.details ?? error.message)).toContain(field)
    const after = await ctx.handle.sql`select (select count(*) from users) as users, (select count(*) from cart_items) as lines,
      (select md5(string_agg(o::text, ',')) from orders o) as orders, (select md5(string_agg(c::text, ',')) from customers c) as customers`
    expect(after).toEqual(before)
  })
})
