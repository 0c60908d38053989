/**
 * Importing customers (docs/csv.md): a row per customer, found by `customer_id`, else by email
 * (case-insensitive). New customers are guests (no login), as POST /customers makes them. The
 * email of a customer with an account is its login and changes only through the API, which
 * changes both; a deleted customer stays deleted.
 */
import { ANONYMIZED_EMAIL_DOMAIN, CreateCustomer, isUuid } from '@commerce/domain'
import {
  newId,
  readCustomerMatches,
  readCustomerSnapshots,
  sqlOf,
  writeCustomers,
  writeEvents,
  type CustomerWrite,
  type ImportReportRow,
} from '@commerce/db'
import { CellProblem, checked, readList, readText } from './cells.js'
import { CUSTOMER_COLUMNS } from './columns.js'
import { HeaderProblem, type RowHandler } from './import.js'

interface CustomerRow {
  row: number
  cells: string[]
  misaligned?: string | undefined
  repeatOf?: number
}

const NAME_FIELDS = [
  ['first_name', 'firstName'],
  ['last_name', 'lastName'],
  ['phone', 'phone'],
] as const
const FIELDS = [['email', 'email'], ...NAME_FIELDS] as const

export function customerImport(header: string[], context: { actor: string | null }): RowHandler<CustomerRow> {
  const index = new Map<string, number>()
  header.forEach((name, position) => {
    if (index.has(name)) throw new HeaderProblem(`The column '${name}' appears twice in the header`)
    index.set(name, position)
  })
  const unknown = header.filter((name) => !(CUSTOMER_COLUMNS as readonly string[]).includes(name))
  if (unknown.length > 0) throw new HeaderProblem(`Unknown columns: ${unknown.map((name) => `'${name}'`).join(', ')} (docs/csv.md lists them)`)
  if (!index.has('customer_id') && !index.has('email')) throw new HeaderProblem('The header needs customer_id or email, to know which customer each row is')
  const cell = (cells: string[], column: string) => {
    const position = index.get(column)
    // A short row's missing cells read as empty (the row is refused as misaligned anyway).
    return position === undefined ? undefined : (cells[position] ?? '')
  }
  const present = FIELDS.filter(([column]) => index.has(column)).map(([, field]) => field)
  const keyOf = (cells: string[], row: number) => {
    const id = cell(cells, 'customer_id')?.trim().toLowerCase()
    if (id) return `id:${id}`
    const email = readText(cell(cells, 'email') ?? '')?.trim().toLowerCase()
    return email ? `email:${email}` : `row:${row}`
  }
  const seen = new Map<string, number>()

  return {
    take(row, cells, misaligned) {
      const key = keyOf(cells, row)
      const first = seen.get(key)
      if (first === undefined) seen.set(key, row)
      return [{ row, cells, misaligned, ...(first !== undefined && { repeatOf: first }) }]
    },
    finish: () => [],
    rowCount: () => 1,

    async apply(tx, rows, dryRun) {
      const sql = sqlOf(tx)
      const ids = new Set<string>()
      const emails = new Set<string>()
      const groups = new Set<string>()
      for (const { cells } of rows) {
        const id = cell(cells, 'customer_id')?.trim().toLowerCase()
        if (id && isUuid(id)) ids.add(id)
        const email = readText(cell(cells, 'email') ?? '')?.trim()
        if (email) emails.add(email)
        for (const name of readList(cell(cells, 'groups') ?? '')) groups.add(name)
      }
      const matches = await readCustomerMatches(sql, { ids: [...ids], emails: [...emails], groups: [...groups] })
      const report: ImportReportRow[] = []
      const writes: CustomerWrite[] = []
      const emailsInBatch = new Map<string, string>()
      for (const { row, cells, misaligned, repeatOf } of rows) {
        const problems: string[] = []
        const attempt = <T>(read: () => T): T | undefined => {
          try {
            return read()
          } catch (error) {
            if (!(error instanceof CellProblem)) throw error
            problems.push(error.message)
            return undefined
          }
        }
        if (misaligned) problems.push(misaligned)
        if (repeatOf !== undefined) problems.push(`the customer is also on row ${repeatOf}`)
        const id = cell(cells, 'customer_id')?.trim().toLowerCase() || undefined
        const emailCell = cell(cells, 'email')
        const email = emailCell === undefined ? undefined : readText(emailCell)?.trim() ?? null
        if (id && !isUuid(id)) problems.push(`customer_id: '${id}' is not a UUID`)
        const byEmail = email ? matches.customers.find((customer) => !customer.deleted && customer.email.toLowerCase() === email.toLowerCase()) : undefined
        const existing = id ? matches.customers.find((customer) => customer.id === id) : byEmail
        if (!id && !email) problems.push('a row needs a customer_id or an email')
        if (existing?.deleted) problems.push('the customer was deleted')
        const customerId = existing?.id ?? id ?? newId()
        const create = !existing
        const fields: CustomerWrite['fields'] = {}
        if (email === null) problems.push('email: required')
        else if (email !== undefined) {
          attempt(() => checked('email', CreateCustomer.properties.email, email))
          if (email.toLowerCase().endsWith(`@${ANONYMIZED_EMAIL_DOMAIN}`)) problems.push(`email: the domain ${ANONYMIZED_EMAIL_DOMAIN} is reserved`)
          if (byEmail && byEmail.id !== customerId) problems.push(`email: another customer has it (${byEmail.id})`)
          const other = emailsInBatch.get(email.toLowerCase())
          if (other !== undefined && other !== customerId) problems.push('email: another row of this file gives it to another customer')
          emailsInBatch.set(email.toLowerCase(), customerId)
          if (existing?.hasAccount && existing.email.toLowerCase() !== email.toLowerCase()) {
            problems.push('email: the customer has an account, whose login it is: change it through PATCH /customers/{id}')
          }
          fields.email = existing?.hasAccount ? existing.email : email
        } else if (create) problems.push('email: required for a new customer')
        for (const [column, field] of NAME_FIELDS) {
          const text = cell(cells, column)
          if (text === undefined) {
            if (create) fields[field] = null
            continue
          }
          const value = attempt(() => checked(column, CreateCustomer.properties[column], readText(text)))
          if (value !== undefined) fields[field] = value
        }
        let groupIds: string[] | undefined
        const groupsCell = cell(cells, 'groups')
        if (groupsCell !== undefined) {
          groupIds = []
          for (const name of readList(groupsCell)) {
            const group = matches.groups.find((candidate) => candidate.name.toLowerCase() === name.toLowerCase())
            if (group) groupIds.push(group.id)
            else problems.push(`groups: no customer group is named '${name}' (create it first)`)
          }
        }
        const key = email ?? id ?? null
        if (problems.length > 0) {
          report.push({ row, action: 'refuse', resourceId: existing?.id ?? null, key, reason: problems.join('; ') })
          continue
        }
        report.push({ row, action: create ? 'create' : 'update', resourceId: customerId, key, reason: null })
        writes.push({ id: customerId, create, fields, groupIds })
      }
      if (!dryRun && writes.length > 0) {
        await writeCustomers(sql, { customers: writes, present })
        // As through the API: a new customer is an event, a changed one is not (there is no customer.updated).
        const customers = await readCustomerSnapshots(tx, writes.filter((write) => write.create).map((write) => write.id))
        if (customers.length > 0) await writeEvents(
          tx,
          customers.map((customer) => ({
            kind: 'customer.created' as const,
            resourceId: customer.id,
            data: customer,
            customerId: customer.id,
            actor: context.actor,
          })),
        )
      }
      return report
    },
  }
}
