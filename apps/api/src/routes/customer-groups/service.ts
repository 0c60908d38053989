/**
 * Customer groups (docs/pricing.md): admin CRUD and membership. A group's id is also kept in the
 * `customer_group_ids` of price lists and promotions; deleting the group takes it out of them in
 * the same transaction, the group row locked first, so a list written at the same time either
 * sees the group gone or is cleaned up with the others.
 */
import { and, arrayContains, count, eq, getTableColumns, ilike, inArray, isNull, ne, sql, type SQL } from 'drizzle-orm'
import type {
  AddCustomerGroupCustomers,
  CreateCustomerGroup,
  CustomerGroup,
  CustomerGroupList,
  CustomerList,
  ListCustomerGroupsQuery,
  UpdateCustomerGroup,
} from '@commerce/domain'
import {
  customerGroupMembers,
  customerGroups,
  customers,
  customerSnapshot,
  isUniqueViolation,
  priceLists,
  promotions,
  type Database,
  type Executor,
} from '@commerce/db'
import { ApiError, conflict, notFound } from '../../errors.js'
import { key, keyset, selectList, type PageQuery } from '../../list-cursor.js'
import { containsPattern } from '../customers/service.js'

type CustomerGroupRow = typeof customerGroups.$inferSelect & { customerCount: number }

/** By name, case-insensitively whatever the collation (customer_groups_name_key is on lower(name), unique). */
const GROUPS_KEYSET = keyset('customer_groups', 'asc', [key.text(sql`lower(${customerGroups.name})`), key.uuid(customerGroups.id)])
/** A group's members, newest customer first: customer_group_members_group_idx (group_id, customer_id). */
const MEMBERS_KEYSET = keyset('customer_group_customers', 'desc', [key.uuid(customerGroupMembers.customerId)])

/**
 * Groups with their live members counted (a deleted customer leaves its groups, customers/service.ts
 * anonymise; deleted ones are never counted): one statement, grouped by the group's key.
 */
function groupsWithCount(executor: Executor) {
  return executor
    .select({ ...getTableColumns(customerGroups), customerCount: count(customers.id), cursorKey: GROUPS_KEYSET.cursorKey })
    .from(customerGroups)
    .leftJoin(customerGroupMembers, eq(customerGroupMembers.groupId, customerGroups.id))
    .leftJoin(customers, and(eq(customers.id, customerGroupMembers.customerId), isNull(customers.deletedAt)))
    .groupBy(customerGroups.id)
    .$dynamic()
}

function toCustomerGroup(row: CustomerGroupRow): CustomerGroup {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    customer_count: row.customerCount,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

const nameTaken = (name: string) => conflict(`A customer group named '${name}' already exists`)

export function createCustomerGroupService(db: Database) {
  /** The unique index's own expression (lower(name)), so the check and the index agree on a clash. */
  async function checkNameFree(tx: Executor, name: string, selfId?: string) {
    const [clash] = await tx
      .select({ id: customerGroups.id })
      .from(customerGroups)
      .where(and(sql`lower(${customerGroups.name}) = lower(${name})`, selfId ? ne(customerGroups.id, selfId) : undefined))
    if (clash) throw nameTaken(name)
  }

  /** Runs a write; a name clash that slipped past the check (two requests at once) becomes a 409. */
  async function write<T>(name: string | undefined, work: (tx: Executor) => Promise<T>): Promise<T> {
    try {
      return await db.transaction(work)
    } catch (error) {
      if (isUniqueViolation(error)) throw nameTaken(name ?? '')
      throw error
    }
  }

  async function read(executor: Executor, id: string): Promise<CustomerGroup> {
    const [row] = await groupsWithCount(executor).where(eq(customerGroups.id, id))
    if (!row) throw notFound('Customer group')
    return toCustomerGroup(row)
  }

  /** The group, locked for the rest of the transaction: `update` to change or delete it, `key share` to keep it from being deleted. */
  async function lock(tx: Executor, id: string, strength: 'update' | 'key share') {
    const [row] = await tx.select({ id: customerGroups.id }).from(customerGroups).where(eq(customerGroups.id, id)).for(strength)
    if (!row) throw notFound('Customer group')
  }

  return {
    async list(query: ListCustomerGroupsQuery): Promise<CustomerGroupList> {
      const where = query.q ? ilike(customerGroups.name, containsPattern(query.q)) : undefined
      const { rows, meta } = await selectList(GROUPS_KEYSET, query, groupsWithCount(db), where, () => db.$count(customerGroups, where))
      return { customer_groups: rows.map(toCustomerGroup), meta }
    },

    get: (id: string) => read(db, id),

    create(body: CreateCustomerGroup): Promise<CustomerGroup> {
      return write(body.name, async (tx) => {
        await checkNameFree(tx, body.name)
        const [row] = await tx
          .insert(customerGroups)
          .values({ name: body.name, description: body.description ?? null })
          .returning()
        return toCustomerGroup({ ...row!, customerCount: 0 })
      })
    },

    update(id: string, body: UpdateCustomerGroup): Promise<CustomerGroup> {
      return write(body.name, async (tx) => {
        await lock(tx, id, 'update')
        if (body.name !== undefined) await checkNameFree(tx, body.name, id)
        await tx
          .update(customerGroups)
          .set({ name: body.name, description: body.description, updatedAt: new Date() })
          .where(eq(customerGroups.id, id))
        return read(tx, id)
      })
    },

    /** Deletes the group and its memberships (the foreign key's cascade), and takes its id out of price lists and promotions. */
    remove(id: string): Promise<void> {
      return write(undefined, async (tx) => {
        await lock(tx, id, 'update')
        const now = new Date()
        await tx
          .update(priceLists)
          .set({ customerGroupIds: sql`array_remove(${priceLists.customerGroupIds}, ${id}::uuid)`, updatedAt: now })
          .where(arrayContains(priceLists.customerGroupIds, [id]))
        await tx
          .update(promotions)
          .set({ customerGroupIds: sql`array_remove(${promotions.customerGroupIds}, ${id}::uuid)`, updatedAt: now })
          .where(arrayContains(promotions.customerGroupIds, [id]))
        await tx.delete(customerGroups).where(eq(customerGroups.id, id))
      })
    },

    /** The group's live members, newest customer first. */
    async listCustomers(id: string, query: PageQuery): Promise<CustomerList> {
      await read(db, id)
      const where: SQL = and(eq(customerGroupMembers.groupId, id), isNull(customers.deletedAt))!
      const select = db
        .select({ customer: customers, cursorKey: MEMBERS_KEYSET.cursorKey })
        .from(customerGroupMembers)
        .innerJoin(customers, eq(customers.id, customerGroupMembers.customerId))
        .$dynamic()
      const { rows, meta } = await selectList(MEMBERS_KEYSET, query, select, where, async () => {
        const [counted] = await db.select({ total: count() }).from(customerGroupMembers).innerJoin(customers, eq(customers.id, customerGroupMembers.customerId)).where(where)
        return counted!.total
      })
      return { customers: rows.map((row) => customerSnapshot(row.customer)), meta }
    },

    /**
     * Adds customers; those already members stay members. Every id must be a live customer (400
     * naming each `customer_ids[i]` that is not), and nothing is added unless all are. The
     * customers are share-locked, so one being deleted at the same time is either refused here or
     * leaves the group with its deletion.
     */
    addCustomers(id: string, body: AddCustomerGroupCustomers): Promise<CustomerGroup> {
      return write(undefined, async (tx) => {
        await lock(tx, id, 'key share')
        const ids = [...new Set(body.customer_ids)]
        const found = await tx
          .select({ id: customers.id })
          .from(customers)
          .where(and(inArray(customers.id, ids), isNull(customers.deletedAt)))
          .for('share')
        const live = new Set(found.map((row) => row.id))
        const unknown = body.customer_ids.flatMap((customerId, index) =>
          live.has(customerId) || body.customer_ids.indexOf(customerId) !== index ? [] : [`customer_ids[${index}]`],
        )
        if (unknown.length > 0) {
          const details = unknown.map((field) => ({ field, message: `Field '${field}' names no customer` }))
          throw new ApiError('validation_error', details.map((detail) => detail.message).join('; '), details)
        }
        await tx
          .insert(customerGroupMembers)
          .values(ids.map((customerId) => ({ groupId: id, customerId })))
          .onConflictDoNothing()
        return read(tx, id)
      })
    },

    async removeCustomer(id: string, customerId: string): Promise<void> {
      await read(db, id)
      const deleted = await db
        .delete(customerGroupMembers)
        .where(and(eq(customerGroupMembers.groupId, id), eq(customerGroupMembers.customerId, customerId)))
        .returning({ customerId: customerGroupMembers.customerId })
      if (deleted.length === 0) throw new ApiError('not_found', 'The customer is not a member of this group')
    },
  }
}
