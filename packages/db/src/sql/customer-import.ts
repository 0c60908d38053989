/**
 * The writes of a customers CSV import (docs/csv.md), a batch at a time in the worker's
 * transaction: what the rows match (by id, else by email), then guest customers made and
 * customers changed in the columns the file has, and their groups set.
 */
import { inArray } from 'drizzle-orm'
import type { Customer } from '@commerce/domain'
import { customerSnapshot } from '../accounts.js'
import type { Executor } from '../client.js'
import { customers } from '../schema/index.js'
import type { SqlClient } from '../transaction.js'

export interface CustomerMatches {
  /** Live customers by id or email; `deleted` ones only by id (the file may name one). */
  customers: { id: string; email: string; hasAccount: boolean; deleted: boolean }[]
  groups: { id: string; name: string }[]
}

// $1 ids, $2 lower-cased emails, $3 lower-cased group names.
const MATCHES = `select
  (select coalesce(json_agg(json_build_object('id', c.id, 'email', c.email, 'hasAccount', c.user_id is not null, 'deleted', c.deleted_at is not null)), '[]')
    from customers c where c.id = any($1::uuid[]) or (lower(c.email) = any($2::text[]) and c.deleted_at is null)) as customers,
  (select coalesce(json_agg(json_build_object('id', g.id, 'name', g.name)), '[]') from customer_groups g where lower(g.name) = any($3::text[])) as groups`

export async function readCustomerMatches(sql: SqlClient, names: { ids: string[]; emails: string[]; groups: string[] }): Promise<CustomerMatches> {
  const [row] = await sql.unsafe<CustomerMatches[]>(MATCHES, [names.ids, names.emails.map((email) => email.toLowerCase()), names.groups.map((name) => name.toLowerCase())], {
    prepare: true,
  })
  return row!
}

export interface CustomerWrite {
  id: string
  create: boolean
  fields: { email?: string; firstName?: string | null; lastName?: string | null; phone?: string | null }
  /** Undefined: the customer's groups stay as they are. */
  groupIds?: string[] | undefined
}

const RECORD = `r(id uuid, email text, "firstName" text, "lastName" text, phone text)`
const INSERT = `insert into customers (id, email, first_name, last_name, phone)
select r.id, r.email, r."firstName", r."lastName", r.phone from json_to_recordset($1::json) as ${RECORD}`
const keep = (column: string, field: string) => `case when '${field}' = any($2::text[]) then r."${field}" else c.${column} end`
// $1 the changes, $2 the fields the file has.
const UPDATE = `update customers c set email = ${keep('email', 'email')}, first_name = ${keep('first_name', 'firstName')},
  last_name = ${keep('last_name', 'lastName')}, phone = ${keep('phone', 'phone')}, updated_at = now()
from json_to_recordset($1::json) as ${RECORD} where c.id = r.id`
const CLEAR_GROUPS = `delete from customer_group_members where customer_id = any($1::uuid[])`
const ADD_GROUPS = `insert into customer_group_members (group_id, customer_id)
select r.group, r.customer from json_to_recordset($1::json) as r("group" uuid, customer uuid)`

/** Writes a batch's customers and their groups in the caller's transaction. */
export async function writeCustomers(sql: SqlClient, batch: { customers: CustomerWrite[]; present: string[] }): Promise<void> {
  const created = batch.customers.filter((customer) => customer.create)
  const changed = batch.customers.filter((customer) => !customer.create)
  if (created.length > 0) await sql.unsafe(INSERT, [JSON.stringify(created.map((customer) => ({ ...customer.fields, id: customer.id })))], { prepare: true })
  if (changed.length > 0 && batch.present.length > 0) {
    await sql.unsafe(UPDATE, [JSON.stringify(changed.map((customer) => ({ ...customer.fields, id: customer.id }))), batch.present], { prepare: true })
  }
  const grouped = batch.customers.filter((customer) => customer.groupIds !== undefined)
  if (grouped.length > 0) {
    await sql.unsafe(CLEAR_GROUPS, [grouped.map((customer) => customer.id)], { prepare: true })
    const links = grouped.flatMap((customer) => customer.groupIds!.map((group) => ({ group, customer: customer.id })))
    if (links.length > 0) await sql.unsafe(ADD_GROUPS, [JSON.stringify(links)], { prepare: true })
  }
}

/** The batch's customers as the API shows them, for their events. */
export async function readCustomerSnapshots(tx: Executor, ids: readonly string[]): Promise<Customer[]> {
  if (ids.length === 0) return []
  const rows = await tx.select().from(customers).where(inArray(customers.id, [...ids])).orderBy(customers.id)
  return rows.map(customerSnapshot)
}
