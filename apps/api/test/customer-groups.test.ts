/** Customer groups: admin CRUD, unique names in any case, members (idempotent, all or nothing), and deleting a group out of price lists and promotions. */
import { afterAll, beforeAll, describe, expect } from 'vitest'
import type { Customer, CustomerGroup, CustomerGroupList, CustomerList } from '@commerce/domain'
import { createTestContext, test, type TestContext } from './helpers.js'

const GROUPS = '/api/v1/customer-groups'
const UNKNOWN_ID = '0190a6f1-7c3a-7000-8000-00000000cafe'
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

let seq = 0
const uniqueName = (label = 'Group') => `${label} ${++seq}`

function createGroup(ctx: TestContext, admin: string, payload: Record<string, unknown> = {}): Promise<CustomerGroup> {
  return ctx.expectStatus(201, { method: 'POST', url: GROUPS, payload: { name: uniqueName(), ...payload }, token: admin })
}

function getGroup(ctx: TestContext, admin: string, id: string): Promise<CustomerGroup> {
  return ctx.expectStatus(200, { method: 'GET', url: `${GROUPS}/${id}`, token: admin })
}

function createCustomer(ctx: TestContext, admin: string, label = 'member'): Promise<Customer> {
  return ctx.expectStatus(201, { method: 'POST', url: '/api/v1/customers', payload: { email: `${label}-${++seq}@example.com` }, token: admin })
}

function addCustomers(ctx: TestContext, admin: string, groupId: string, customerIds: string[]) {
  return ctx.request({ method: 'POST', url: `${GROUPS}/${groupId}/customers`, payload: { customer_ids: customerIds }, token: admin })
}

async function membersOf(ctx: TestContext, groupId: string): Promise<string[]> {
  const rows = await ctx.handle.sql<{ customer_id: string }[]>`select customer_id from customer_group_members where group_id = ${groupId} order by customer_id`
  return rows.map((row) => row.customer_id)
}

describe('POST /api/v1/customer-groups', () => {
  test('creates a group: 201 with every field, no customers yet', async ({ ctx, admin }) => {
    const body = await ctx.expectStatus<CustomerGroup>(201, {
      method: 'POST',
      url: GROUPS,
      token: admin,
      payload: { name: 'Wholesale', description: 'Trade accounts' },
    })
    expect(body).toEqual({
      id: expect.stringMatching(UUID),
      name: 'Wholesale',
      description: 'Trade accounts',
      customer_count: 0,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    })
    expect(await getGroup(ctx, admin, body.id)).toEqual(body)
    expect((await createGroup(ctx, admin)).description).toBeNull()
  })

  test('a name taken in any letter case answers 409 conflict and creates nothing', async ({ ctx, admin }) => {
    await createGroup(ctx, admin, { name: 'VIP' })
    const before = await ctx.countRows('customer_groups')
    const error = await ctx.expectError(409, 'conflict', { method: 'POST', url: GROUPS, token: admin, payload: { name: 'vip' } })
    expect(error.message).toBe("A customer group named 'vip' already exists")
    expect(await ctx.countRows('customer_groups')).toBe(before)
  })

  test('refuses a missing, empty or too long name, a bad description and unknown or read-only fields, naming the field', async ({ ctx, admin }) => {
    const refuse = (payload: Record<string, unknown>, field: string) =>
      ctx.expectInvalidField({ method: 'POST', url: GROUPS, payload, token: admin }, field, 'customer_groups')
    const missing = await refuse({ description: 'x' }, 'name')
    expect(missing.message).toBe("Field 'name' is required")
    await refuse({ name: '' }, 'name')
    await refuse({ name: 'x'.repeat(201) }, 'name')
    await refuse({ name: 5 }, 'name')
    await refuse({ name: uniqueName(), description: 'x'.repeat(2001) }, 'description')
    await refuse({ name: uniqueName(), customer_count: 3 }, 'customer_count')
    await refuse({ name: uniqueName(), id: UNKNOWN_ID }, 'id')
    const malformed = await ctx.request({ method: 'POST', url: GROUPS, token: admin, headers: { 'content-type': 'application/json' }, payload: '{"name":' })
    expect(malformed.statusCode).toBe(400)
    expect(malformed.json().error.code).toBe('validation_error')
  })

  test('answers 401 without a token, 403 to a customer and to an API key without customers:write; a key with it creates', async ({ ctx, customer }) => {
    const before = await ctx.countRows('customer_groups')
    const payload = { name: uniqueName('Keyed') }
    await ctx.expectError(401, 'unauthorized', { method: 'POST', url: GROUPS, payload })
    await ctx.expectError(403, 'forbidden', { method: 'POST', url: GROUPS, payload, token: customer })
    for (const scopes of [['customers:read'], ['pricing:write']]) {
      const { key } = await ctx.createApiKey(scopes)
      await ctx.expectError(403, 'forbidden', { method: 'POST', url: GROUPS, payload, token: key })
    }
    expect(await ctx.countRows('customer_groups')).toBe(before)
    const { key } = await ctx.createApiKey(['customers:write'])
    const created = await ctx.expectStatus<CustomerGroup>(201, { method: 'POST', url: GROUPS, payload, token: key })
    // write implies read
    expect(await ctx.expectStatus(200, { method: 'GET', url: `${GROUPS}/${created.id}`, token: key })).toEqual(created)
  })
})

describe('GET /api/v1/customer-groups/:id', () => {
  test('answers the group; 404 unknown, 400 malformed id, 401 anonymous, 403 customer, 200 with a customers:read key', async ({ ctx, admin, customer }) => {
    const group = await createGroup(ctx, admin)
    const url = `${GROUPS}/${group.id}`
    const missing = await ctx.expectError(404, 'not_found', { method: 'GET', url: `${GROUPS}/${UNKNOWN_ID}`, token: admin })
    expect(missing.message).toBe('Customer group not found')
    const malformed = await ctx.expectError(400, 'validation_error', { method: 'GET', url: `${GROUPS}/nope`, token: admin })
    expect(malformed.details).toContainEqual(expect.objectContaining({ field: 'id' }))
    await ctx.expectError(401, 'unauthorized', { method: 'GET', url })
    await ctx.expectError(403, 'forbidden', { method: 'GET', url, token: customer })
    const { key } = await ctx.createApiKey(['customers:read'])
    expect(await ctx.expectStatus(200, { method: 'GET', url, token: key })).toEqual(group)
  })
})

describe('GET /api/v1/customer-groups', () => {
  let own: TestContext
  let ownAdmin: string
  const created: CustomerGroup[] = []

  beforeAll(async () => {
    own = await createTestContext()
    ownAdmin = (await own.signIn('admin')).token
    for (const name of ['retail', 'Wholesale', 'VIP 100%', 'Staff_only']) {
      created.push(await own.expectStatus<CustomerGroup>(201, { method: 'POST', url: GROUPS, payload: { name }, token: ownAdmin }))
    }
    const member = await createCustomer(own, ownAdmin)
    expect((await addCustomers(own, ownAdmin, created[1]!.id, [member.id])).statusCode).toBe(200)
  })
  afterAll(() => own.close())

  const list = (query = '') => own.expectStatus<CustomerGroupList>(200, { method: 'GET', url: `${GROUPS}${query}`, token: ownAdmin })
  const names = (body: CustomerGroupList) => body.customer_groups.map((group) => group.name)

  test('lists every group by name, case-insensitively, with its customer count, in the list envelope', async () => {
    const body = await list()
    expect(names(body)).toEqual(['retail', 'Staff_only', 'VIP 100%', 'Wholesale'])
    expect(body.meta).toEqual({ page: 1, per_page: 20, total: 4, total_pages: 1 })
    expect(body.customer_groups.find((group) => group.name === 'Wholesale')).toEqual({ ...created[1], customer_count: 1 })
  })

  test('q matches a case-insensitive substring of the name; % and _ match themselves', async () => {
    expect(names(await list('?q=SALE'))).toEqual(['Wholesale'])
    expect(names(await list('?q=a'))).toEqual(['retail', 'Staff_only', 'Wholesale'])
    expect(names(await list('?q=%25'))).toEqual(['VIP 100%'])
    expect(names(await list('?q=_'))).toEqual(['Staff_only'])
    const none = await list('?q=nothing')
    expect(none).toEqual({ customer_groups: [], meta: { page: 1, per_page: 20, total: 0, total_pages: 0 } })
  })

  test('pages with per_page, and refuses bad page bounds', async () => {
    expect(await list('?per_page=3&page=2')).toEqual({
      customer_groups: [{ ...created[1], customer_count: 1 }],
      meta: { page: 2, per_page: 3, total: 4, total_pages: 2 },
    })
    expect(names(await list('?per_page=2&page=1&q=a'))).toEqual(['retail', 'Staff_only'])
    for (const [query, field] of [
      ['?per_page=101', 'per_page'],
      ['?per_page=0', 'per_page'],
      ['?page=0', 'page'],
      ['?page=x', 'page'],
      [`?q=${'x'.repeat(201)}`, 'q'],
    ] as const) {
      const error = await own.expectError(400, 'validation_error', { method: 'GET', url: `${GROUPS}${query}`, token: ownAdmin })
      expect(error.details).toContainEqual(expect.objectContaining({ field }))
    }
  })

  test('answers 401 anonymous and 403 to a customer', async () => {
    await own.expectError(401, 'unauthorized', { method: 'GET', url: GROUPS })
    const { token } = await own.signIn('customer')
    await own.expectError(403, 'forbidden', { method: 'GET', url: GROUPS, token })
  })
})

describe('PATCH /api/v1/customer-groups/:id', () => {
  const patch = (ctx: TestContext, admin: string, id: string, payload: Record<string, unknown>) =>
    ctx.request({ method: 'PATCH', url: `${GROUPS}/${id}`, payload, token: admin })

  test('changes only the fields sent and answers the group', async ({ ctx, admin }) => {
    const group = await createGroup(ctx, admin, { description: 'Before' })
    const renamed = await patch(ctx, admin, group.id, { name: `${group.name} renamed` })
    expect(renamed.statusCode).toBe(200)
    expect(renamed.json()).toEqual({ ...group, name: `${group.name} renamed`, updated_at: expect.stringMatching(ISO) })
    const cleared = await patch(ctx, admin, group.id, { description: null })
    expect(cleared.json()).toMatchObject({ name: `${group.name} renamed`, description: null })
    expect(await getGroup(ctx, admin, group.id)).toEqual(cleared.json())
  })

  test("another group's name in any case is 409; its own name in another case is fine", async ({ ctx, admin }) => {
    await createGroup(ctx, admin, { name: 'Taken name' })
    const group = await createGroup(ctx, admin, { name: 'Mine' })
    const clash = await patch(ctx, admin, group.id, { name: 'TAKEN NAME' })
    expect(clash.statusCode).toBe(409)
    expect(clash.json().error).toMatchObject({ code: 'conflict', message: "A customer group named 'TAKEN NAME' already exists" })
    expect(await getGroup(ctx, admin, group.id)).toEqual(group)
    const same = await patch(ctx, admin, group.id, { name: 'MINE' })
    expect(same.statusCode).toBe(200)
    expect(same.json().name).toBe('MINE')
  })

  test('answers 404 unknown, 400 for an empty body or a bad field, 401 anonymous and 403 to a customer', async ({ ctx, admin, customer }) => {
    const missing = await patch(ctx, admin, UNKNOWN_ID, { name: 'x' })
    expect(missing.statusCode).toBe(404)
    expect(missing.json().error).toMatchObject({ code: 'not_found', message: 'Customer group not found' })
    const group = await createGroup(ctx, admin)
    const url = `${GROUPS}/${group.id}`
    await ctx.expectError(400, 'validation_error', { method: 'PATCH', url, payload: {}, token: admin })
    const empty = await ctx.expectError(400, 'validation_error', { method: 'PATCH', url, payload: { name: '' }, token: admin })
    expect(empty.details).toContainEqual(expect.objectContaining({ field: 'name' }))
    await ctx.expectError(400, 'validation_error', { method: 'PATCH', url, payload: { customer_count: 2 }, token: admin })
    await ctx.expectError(401, 'unauthorized', { method: 'PATCH', url, payload: { name: 'x' } })
    await ctx.expectError(403, 'forbidden', { method: 'PATCH', url, payload: { name: 'x' }, token: customer })
    expect(await getGroup(ctx, admin, group.id)).toEqual(group)
  })
})

describe('DELETE /api/v1/customer-groups/:id', () => {
  test('answers 204; the group and its memberships are gone, its customers stay, and price lists and promotions lose its id', async ({ ctx, admin }) => {
    const group = await createGroup(ctx, admin)
    const other = await createGroup(ctx, admin)
    const member = await createCustomer(ctx, admin)
    expect((await addCustomers(ctx, admin, group.id, [member.id])).statusCode).toBe(200)
    const [onlyList] = await ctx.handle.sql<{ id: string }[]>`
      insert into price_lists (id, name, customer_group_ids) values (gen_random_uuid(), 'Only it', ${[group.id]}::uuid[]) returning id`
    const [bothList] = await ctx.handle.sql<{ id: string }[]>`
      insert into price_lists (id, name, customer_group_ids) values (gen_random_uuid(), 'Both', ${[other.id, group.id]}::uuid[]) returning id`
    const [otherList] = await ctx.handle.sql<{ id: string }[]>`
      insert into price_lists (id, name, customer_group_ids) values (gen_random_uuid(), 'Other', ${[other.id]}::uuid[]) returning id`
    const [promotion] = await ctx.handle.sql<{ id: string }[]>`
      insert into promotions (id, name, type, percent_off_ppm, customer_group_ids)
      values (gen_random_uuid(), 'Group deal', 'percentage', 100000, ${[group.id, other.id]}::uuid[]) returning id`
    const [untouched] = await ctx.handle.sql<{ updated_at: Date }[]>`select updated_at from price_lists where id = ${otherList!.id}`

    const response = await ctx.request({ method: 'DELETE', url: `${GROUPS}/${group.id}`, token: admin })
    expect(response.statusCode).toBe(204)
    expect(response.body).toBe('')
    await ctx.expectError(404, 'not_found', { method: 'GET', url: `${GROUPS}/${group.id}`, token: admin })
    expect(await membersOf(ctx, group.id)).toEqual([])
    expect(await ctx.handle.sql`select id from customers where id = ${member.id} and deleted_at is null`).toHaveLength(1)
    const lists = await ctx.handle.sql<{ id: string; customer_group_ids: string[]; updated_at: Date }[]>`
      select id, customer_group_ids, updated_at from price_lists where id in (${onlyList!.id}, ${bothList!.id}, ${otherList!.id})`
    const groupsOf = Object.fromEntries(lists.map((list) => [list.id, list.customer_group_ids]))
    expect(groupsOf).toEqual({ [onlyList!.id]: [], [bothList!.id]: [other.id], [otherList!.id]: [other.id] })
    expect(lists.find((list) => list.id === otherList!.id)!.updated_at).toEqual(untouched!.updated_at)
    const [promoted] = await ctx.handle.sql<{ customer_group_ids: string[] }[]>`select customer_group_ids from promotions where id = ${promotion!.id}`
    expect(promoted!.customer_group_ids).toEqual([other.id])

    const again = await ctx.expectError(404, 'not_found', { method: 'DELETE', url: `${GROUPS}/${group.id}`, token: admin })
    expect(again.message).toBe('Customer group not found')
  })

  test('is all or nothing: a failure while deleting keeps the group and the lists naming it', async ({ ctx, admin }) => {
    const group = await createGroup(ctx, admin)
    const [list] = await ctx.handle.sql<{ id: string }[]>`
      insert into price_lists (id, name, customer_group_ids) values (gen_random_uuid(), 'Kept', ${[group.id]}::uuid[]) returning id`
    // The last step (deleting the group row) fails: the lists' updates before it roll back.
    await ctx.handle.sql`create function refuse_group_delete() returns trigger language plpgsql as $$ begin raise exception 'forced failure'; end $$`
    await ctx.handle.sql`create trigger refuse_group_delete before delete on customer_groups for each row execute function refuse_group_delete()`
    try {
      await ctx.expectError(500, 'internal_error', { method: 'DELETE', url: `${GROUPS}/${group.id}`, token: admin })
    } finally {
      await ctx.handle.sql`drop trigger refuse_group_delete on customer_groups`
      await ctx.handle.sql`drop function refuse_group_delete()`
    }
    expect(await getGroup(ctx, admin, group.id)).toEqual(group)
    const [kept] = await ctx.handle.sql<{ customer_group_ids: string[] }[]>`select customer_group_ids from price_lists where id = ${list!.id}`
    expect(kept!.customer_group_ids).toEqual([group.id])
  })

  test('answers 401 anonymous and 403 to a customer or a customers:read key; the group stays', async ({ ctx, admin, customer }) => {
    const group = await createGroup(ctx, admin)
    const url = `${GROUPS}/${group.id}`
    await ctx.expectError(401, 'unauthorized', { method: 'DELETE', url })
    await ctx.expectError(403, 'forbidden', { method: 'DELETE', url, token: customer })
    await ctx.expectError(403, 'forbidden', { method: 'DELETE', url, token: (await ctx.createApiKey(['customers:read'])).key })
    expect(await getGroup(ctx, admin, group.id)).toEqual(group)
  })
})

describe('members: /api/v1/customer-groups/:id/customers', () => {
  test('adds customers and answers the group with its count; adding again (and repeats in one request) changes nothing', async ({ ctx, admin }) => {
    const group = await createGroup(ctx, admin)
    const [ada, bob, cy] = [await createCustomer(ctx, admin), await createCustomer(ctx, admin), await createCustomer(ctx, admin)]
    const added = await addCustomers(ctx, admin, group.id, [ada!.id, bob!.id, ada!.id])
    expect(added.statusCode).toBe(200)
    expect(added.json()).toEqual({ ...group, customer_count: 2 })
    expect(await membersOf(ctx, group.id)).toEqual([ada!.id, bob!.id].sort())

    const again = await addCustomers(ctx, admin, group.id, [bob!.id, cy!.id])
    expect(again.json<CustomerGroup>().customer_count).toBe(3)
    expect((await addCustomers(ctx, admin, group.id, [cy!.id])).json<CustomerGroup>().customer_count).toBe(3)
    expect(await membersOf(ctx, group.id)).toEqual([ada!.id, bob!.id, cy!.id].sort())
    expect((await getGroup(ctx, admin, group.id)).customer_count).toBe(3)
  })

  test('lists the members newest customer first, paged, in the customers list shape', async ({ ctx, admin }) => {
    const group = await createGroup(ctx, admin)
    const outsider = await createCustomer(ctx, admin)
    const members: Customer[] = []
    for (let i = 0; i < 3; i++) members.push(await createCustomer(ctx, admin))
    await addCustomers(ctx, admin, group.id, members.map((member) => member.id))
    const url = `${GROUPS}/${group.id}/customers`
    const all = await ctx.expectStatus<CustomerList>(200, { method: 'GET', url, token: admin })
    expect(all).toEqual({ customers: [...members].reverse(), meta: { page: 1, per_page: 20, total: 3, total_pages: 1 } })
    expect(all.customers.map((c) => c.id)).not.toContain(outsider.id)
    const second = await ctx.expectStatus<CustomerList>(200, { method: 'GET', url: `${url}?per_page=2&page=2`, token: admin })
    expect(second).toEqual({ customers: [members[0]], meta: { page: 2, per_page: 2, total: 3, total_pages: 2 } })
    await ctx.expectError(400, 'validation_error', { method: 'GET', url: `${url}?per_page=500`, token: admin })
    const missing = await ctx.expectError(404, 'not_found', { method: 'GET', url: `${GROUPS}/${UNKNOWN_ID}/customers`, token: admin })
    expect(missing.message).toBe('Customer group not found')
    const empty = await createGroup(ctx, admin)
    expect(await ctx.expectStatus(200, { method: 'GET', url: `${GROUPS}/${empty.id}/customers`, token: admin })).toEqual({
      customers: [],
      meta: { page: 1, per_page: 20, total: 0, total_pages: 0 },
    })
  })

  test('an unknown or deleted customer is 400 naming each customer_ids[i] at fault, and no one is added', async ({ ctx, admin }) => {
    const group = await createGroup(ctx, admin)
    const known = await createCustomer(ctx, admin)
    const gone = await createCustomer(ctx, admin)
    await ctx.expectStatus(204, { method: 'DELETE', url: `/api/v1/customers/${gone.id}`, token: admin })
    const before = await ctx.countRows('customer_group_members')
    const response = await addCustomers(ctx, admin, group.id, [known.id, UNKNOWN_ID, gone.id])
    expect(response.statusCode).toBe(400)
    expect(response.json().error).toEqual({
      code: 'validation_error',
      message: "Field 'customer_ids[1]' names no customer; Field 'customer_ids[2]' names no customer",
      details: [
        { field: 'customer_ids[1]', message: "Field 'customer_ids[1]' names no customer" },
        { field: 'customer_ids[2]', message: "Field 'customer_ids[2]' names no customer" },
      ],
      request_id: response.headers['x-request-id'],
    })
    expect(await ctx.countRows('customer_group_members')).toBe(before)
    expect((await getGroup(ctx, admin, group.id)).customer_count).toBe(0)
  })

  test('refuses a body without ids, with none, more than 100, or not UUIDs; an unknown group is 404', async ({ ctx, admin }) => {
    const group = await createGroup(ctx, admin)
    const url = `${GROUPS}/${group.id}/customers`
    const refuse = (payload: unknown, field: string) =>
      ctx.expectInvalidField({ method: 'POST', url, payload: payload as Record<string, unknown>, token: admin }, field, 'customer_group_members')
    const missing = await refuse({}, 'customer_ids')
    expect(missing.message).toBe("Field 'customer_ids' is required")
    await refuse({ customer_ids: [] }, 'customer_ids')
    const customer = await createCustomer(ctx, admin)
    await refuse({ customer_ids: Array.from({ length: 101 }, () => customer.id) }, 'customer_ids')
    await refuse({ customer_ids: ['not-a-uuid'] }, 'customer_ids.0')
    await refuse({ customer_ids: [`urn:uuid:${customer.id}`] }, 'customer_ids.0')
    await refuse({ customer_ids: customer.id }, 'customer_ids')
    await refuse({ customer_ids: [customer.id], extra: true }, 'extra')
    // 100 is the most: repeats of one customer add it once.
    expect((await addCustomers(ctx, admin, group.id, Array.from({ length: 100 }, () => customer.id))).json<CustomerGroup>().customer_count).toBe(1)
    const unknownGroup = await addCustomers(ctx, admin, UNKNOWN_ID, [customer.id])
    expect(unknownGroup.statusCode).toBe(404)
    expect(unknownGroup.json().error.message).toBe('Customer group not found')
  })

  test('DELETE removes one member (204); a customer not in the group, or an unknown group, is 404', async ({ ctx, admin }) => {
    const group = await createGroup(ctx, admin)
    const [stays, leaves] = [await createCustomer(ctx, admin), await createCustomer(ctx, admin)]
    await addCustomers(ctx, admin, group.id, [stays!.id, leaves!.id])
    await ctx.expectStatus(204, { method: 'DELETE', url: `${GROUPS}/${group.id}/customers/${leaves!.id}`, token: admin })
    expect(await membersOf(ctx, group.id)).toEqual([stays!.id])
    const notMember = await ctx.expectError(404, 'not_found', { method: 'DELETE', url: `${GROUPS}/${group.id}/customers/${leaves!.id}`, token: admin })
    expect(notMember.message).toBe('The customer is not a member of this group')
    await ctx.expectError(404, 'not_found', { method: 'DELETE', url: `${GROUPS}/${group.id}/customers/${UNKNOWN_ID}`, token: admin })
    const noGroup = await ctx.expectError(404, 'not_found', { method: 'DELETE', url: `${GROUPS}/${UNKNOWN_ID}/customers/${stays!.id}`, token: admin })
    expect(noGroup.message).toBe('Customer group not found')
    await ctx.expectError(400, 'validation_error', { method: 'DELETE', url: `${GROUPS}/${group.id}/customers/nope`, token: admin })
    expect(await membersOf(ctx, group.id)).toEqual([stays!.id])
  })

  test('a deleted (anonymised) customer leaves its groups', async ({ ctx, admin }) => {
    const group = await createGroup(ctx, admin)
    const [stays, deleted] = [await createCustomer(ctx, admin), await createCustomer(ctx, admin)]
    await addCustomers(ctx, admin, group.id, [stays!.id, deleted!.id])
    await ctx.expectStatus(204, { method: 'DELETE', url: `/api/v1/customers/${deleted!.id}`, token: admin })
    expect(await membersOf(ctx, group.id)).toEqual([stays!.id])
    expect((await getGroup(ctx, admin, group.id)).customer_count).toBe(1)
  })

  test('answers 401 anonymous and 403 to a customer, to a customers:read key writing, and to a pricing key', async ({ ctx, admin, customer }) => {
    const group = await createGroup(ctx, admin)
    const member = await createCustomer(ctx, admin)
    const url = `${GROUPS}/${group.id}/customers`
    const payload = { customer_ids: [member.id] }
    await ctx.expectError(401, 'unauthorized', { method: 'POST', url, payload })
    await ctx.expectError(401, 'unauthorized', { method: 'GET', url })
    await ctx.expectError(403, 'forbidden', { method: 'POST', url, payload, token: customer })
    await ctx.expectError(403, 'forbidden', { method: 'GET', url, token: customer })
    const reader = (await ctx.createApiKey(['customers:read'])).key
    await ctx.expectError(403, 'forbidden', { method: 'POST', url, payload, token: reader })
    await ctx.expectError(403, 'forbidden', { method: 'DELETE', url: `${url}/${member.id}`, token: reader })
    await ctx.expectError(403, 'forbidden', { method: 'GET', url, token: (await ctx.createApiKey(['pricing:write'])).key })
    expect(await membersOf(ctx, group.id)).toEqual([])
    await ctx.expectStatus(200, { method: 'GET', url, token: reader })
    const writer = (await ctx.createApiKey(['customers:write'])).key
    expect((await ctx.expectStatus<CustomerGroup>(200, { method: 'POST', url, payload, token: writer })).customer_count).toBe(1)
  })
})
