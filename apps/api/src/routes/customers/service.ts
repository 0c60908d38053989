/** Customers and their saved addresses: queries, writes, default-address rules and anonymising deletes. */
import { and, eq, ilike, isNull, ne, or, sql, type SQL } from 'drizzle-orm'
import {
  ANONYMIZED_EMAIL_DOMAIN,
  toAddress,
  type Address,
  type AddressList,
  type CreateAddress,
  type CreateCustomer,
  type Customer,
  type CustomerAddress,
  type CustomerList,
  type ListCustomersQuery,
  type UpdateAddress,
  type UpdateCustomer,
} from '@commerce/domain'
import {
  carts,
  customerAddresses,
  customerGroupMembers,
  customers,
  customerSnapshot,
  isUniqueViolation,
  users,
  writeEvent,
  type Database,
  type Executor,
} from '@commerce/db'
import { conflict, invalidField, notFound } from '../../errors.js'
import { key, keyset, listTable, type PageQuery } from '../../list-cursor.js'

type AddressRow = typeof customerAddresses.$inferSelect

const anonymizedEmail = (customerId: string) => `deleted-${customerId}@${ANONYMIZED_EMAIL_DOMAIN}`

function toCustomerAddress(row: AddressRow): CustomerAddress {
  return {
    id: row.id,
    customer_id: row.customerId,
    first_name: row.firstName,
    last_name: row.lastName,
    company: row.company,
    line1: row.line1,
    line2: row.line2,
    city: row.city,
    region: row.region,
    postal_code: row.postalCode,
    country: row.country,
    phone: row.phone,
    is_default_shipping: row.isDefaultShipping,
    is_default_billing: row.isDefaultBilling,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

type AddressColumn = 'firstName' | 'lastName' | 'company' | 'line1' | 'line2' | 'city' | 'region' | 'postalCode' | 'country' | 'phone'

/** Address fields in column form; fields left out stay undefined, so an update leaves them alone. */
function addressColumns(address: Address): Pick<AddressRow, AddressColumn>
function addressColumns(address: Partial<Address>): { [K in AddressColumn]?: AddressRow[K] | undefined }
function addressColumns(address: Partial<Address>) {
  return {
    firstName: address.first_name,
    lastName: address.last_name,
    company: address.company,
    line1: address.line1,
    line2: address.line2,
    city: address.city,
    region: address.region,
    postalCode: address.postal_code,
    country: address.country,
    phone: address.phone,
  }
}

/** A LIKE pattern matching `text` literally anywhere: `%`, `_` and `\` lose their wildcard meaning. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`
}

const sameEmail = (column: typeof customers.email | typeof users.email, email: string) =>
  sql`lower(${column}) = lower(${email})`

/** The unique index a PostgreSQL error names, whether postgres.js raised it or Drizzle wrapped it. */
function violatedConstraint(error: unknown): string | undefined {
  for (let current = error; current instanceof Error; current = current.cause) {
    const name = (current as { constraint_name?: unknown }).constraint_name
    if (typeof name === 'string') return name
  }
  return undefined
}

function checkNotReserved(email: string) {
  if (email.toLowerCase().endsWith(`@${ANONYMIZED_EMAIL_DOMAIN}`)) {
    throw invalidField('email', `Field 'email' may not use the reserved domain ${ANONYMIZED_EMAIL_DOMAIN}`)
  }
}

/** Newest first (UUIDv7 ids). */
const CUSTOMERS_KEYSET = keyset('customers', 'desc', [key.uuid(customers.id)])
/** A customer's addresses, oldest first: customer_addresses_customer_idx (customer_id, created_at, id). */
const ADDRESSES_KEYSET = keyset('addresses', 'asc', [key.time(customerAddresses.createdAt), key.uuid(customerAddresses.id)])

export function createCustomerService(db: Database) {
  /** Runs a write; a unique index that caught what the checks could not see becomes a 409. */
  async function write<T>(work: (tx: Executor) => Promise<T>): Promise<T> {
    try {
      return await db.transaction(work)
    } catch (error) {
      if (!isUniqueViolation(error)) throw error
      const constraint = violatedConstraint(error) ?? ''
      if (constraint.startsWith('customer_addresses_default_')) {
        throw conflict('Another request changed the default address at the same time; retry')
      }
      throw conflict('A customer or account with this email already exists')
    }
  }

  const active = (id: string) => and(eq(customers.id, id), isNull(customers.deletedAt))

  /** The live customer, locked: one writer per customer, so default flags and anonymising never interleave. */
  async function lockCustomer(tx: Executor, id: string) {
    const [row] = await tx.select().from(customers).where(active(id)).for('update')
    if (!row) throw notFound('Customer')
    return row
  }

  async function requireCustomer(id: string) {
    const [row] = await db.select({ id: customers.id }).from(customers).where(active(id))
    if (!row) throw notFound('Customer')
  }

  /** Email is unique across customers, and across accounts for a customer who has one. */
  async function checkEmailFree(tx: Executor, email: string, self?: { id: string; userId: string | null }) {
    const [customer] = await tx
      .select({ id: customers.id })
      .from(customers)
      .where(and(sameEmail(customers.email, email), self ? ne(customers.id, self.id) : undefined))
    if (customer) throw conflict(`A customer with email '${email}' already exists`)
    if (!self?.userId) return
    const [user] = await tx
      .select({ id: users.id })
      .from(users)
      .where(and(sameEmail(users.email, email), ne(users.id, self.userId)))
    if (user) throw conflict(`An account with email '${email}' already exists`)
  }

  /** Setting a default takes the flag away from the customer's other addresses (the customer row is locked). */
  async function clearDefaults(
    tx: Executor,
    customerId: string,
    flags: { shipping?: boolean | undefined; billing?: boolean | undefined },
    keepId?: string,
  ) {
    const others = (flag: typeof customerAddresses.isDefaultShipping | typeof customerAddresses.isDefaultBilling) =>
      and(eq(customerAddresses.customerId, customerId), eq(flag, true), keepId ? ne(customerAddresses.id, keepId) : undefined)
    const now = new Date()
    if (flags.shipping) {
      await tx
        .update(customerAddresses)
        .set({ isDefaultShipping: false, updatedAt: now })
        .where(others(customerAddresses.isDefaultShipping))
    }
    if (flags.billing) {
      await tx
        .update(customerAddresses)
        .set({ isDefaultBilling: false, updatedAt: now })
        .where(others(customerAddresses.isDefaultBilling))
    }
  }

  const ofCustomer = (customerId: string, addressId: string) =>
    and(eq(customerAddresses.id, addressId), eq(customerAddresses.customerId, customerId))

  return {
    /** Live customers, newest first; `search` is a case-insensitive substring of email or name. */
    async list(query: ListCustomersQuery): Promise<CustomerList> {
      const conditions: (SQL | undefined)[] = [isNull(customers.deletedAt)]
      if (query.search) {
        const pattern = containsPattern(query.search)
        conditions.push(
          or(
            ilike(customers.email, pattern),
            ilike(customers.firstName, pattern),
            ilike(customers.lastName, pattern),
            // "ada love" finds Ada Lovelace.
            sql`concat_ws(' ', ${customers.firstName}, ${customers.lastName}) ilike ${pattern}`,
          ),
        )
      }
      if (query.email !== undefined) conditions.push(sameEmail(customers.email, query.email))
      const where = and(...conditions)
      const { rows, meta } = await listTable(db, CUSTOMERS_KEYSET, customers, where, query)
      return { customers: rows.map(customerSnapshot), meta }
    },

    async get(id: string): Promise<Customer> {
      const [row] = await db.select().from(customers).where(active(id))
      if (!row) throw notFound('Customer')
      return customerSnapshot(row)
    },

    /** A guest customer (no login) and its customer.created event, in one transaction. */
    create(body: CreateCustomer, requestId: string): Promise<Customer> {
      checkNotReserved(body.email)
      return write(async (tx) => {
        await checkEmailFree(tx, body.email)
        const [row] = await tx
          .insert(customers)
          .values({
            email: body.email,
            firstName: body.first_name ?? null,
            lastName: body.last_name ?? null,
            phone: body.phone ?? null,
          })
          .returning()
        const customer = customerSnapshot(row!)
        await writeEvent(tx, { kind: 'customer.created', resourceId: customer.id, data: customer, customerId: customer.id, requestId })
        return customer
      })
    },

    /** A new email also becomes the login of the customer's account, in the same transaction. */
    update(id: string, body: UpdateCustomer): Promise<Customer> {
      if (body.email !== undefined) checkNotReserved(body.email)
      return write(async (tx) => {
        const current = await lockCustomer(tx, id)
        const now = new Date()
        if (body.email !== undefined && body.email !== current.email) {
          await checkEmailFree(tx, body.email, current)
          if (current.userId) {
            await tx.update(users).set({ email: body.email, updatedAt: now }).where(eq(users.id, current.userId))
          }
        }
        const [row] = await tx
          .update(customers)
          .set({
            email: body.email,
            firstName: body.first_name,
            lastName: body.last_name,
            phone: body.phone,
            updatedAt: now,
          })
          .where(eq(customers.id, id))
          .returning()
        return customerSnapshot(row!)
      })
    },

    /**
     * Deletes the person, keeps the row: personal data is replaced, addresses, customer group
     * memberships and the login are deleted, open carts are deleted and checked-out ones lose
     * email and address, and `deleted_at` hides the customer everywhere. Orders keep pointing at
     * the row.
     */
    anonymise(id: string): Promise<void> {
      return write(async (tx) => {
        const current = await lockCustomer(tx, id)
        const now = new Date()
        await tx.delete(customerAddresses).where(eq(customerAddresses.customerId, id))
        await tx.delete(customerGroupMembers).where(eq(customerGroupMembers.customerId, id))
        await tx.delete(carts).where(and(eq(carts.customerId, id), isNull(carts.completedAt)))
        await tx.update(carts).set({ email: null, shippingAddress: null }).where(eq(carts.customerId, id))
        await tx
          .update(customers)
          .set({
            email: anonymizedEmail(id),
            firstName: null,
            lastName: null,
            phone: null,
            userId: null,
            deletedAt: now,
            updatedAt: now,
          })
          .where(eq(customers.id, id))
        if (current.userId) await tx.delete(users).where(eq(users.id, current.userId))
      })
    },

    async listAddresses(customerId: string, query: PageQuery): Promise<AddressList> {
      await requireCustomer(customerId)
      const { rows, meta } = await listTable(db, ADDRESSES_KEYSET, customerAddresses, eq(customerAddresses.customerId, customerId), query)
      return { addresses: rows.map(toCustomerAddress), meta }
    },

    async getAddress(customerId: string, addressId: string): Promise<CustomerAddress> {
      await requireCustomer(customerId)
      const [row] = await db.select().from(customerAddresses).where(ofCustomer(customerId, addressId))
      if (!row) throw notFound('Address')
      return toCustomerAddress(row)
    },

    /** The customer's first address becomes both defaults unless the request sets either flag. */
    createAddress(customerId: string, body: CreateAddress): Promise<CustomerAddress> {
      return write(async (tx) => {
        await lockCustomer(tx, customerId)
        let shipping = body.is_default_shipping
        let billing = body.is_default_billing
        if (shipping === undefined && billing === undefined) {
          const [existing] = await tx
            .select({ id: customerAddresses.id })
            .from(customerAddresses)
            .where(eq(customerAddresses.customerId, customerId))
            .limit(1)
          if (!existing) shipping = billing = true
        }
        await clearDefaults(tx, customerId, { shipping, billing })
        const [row] = await tx
          .insert(customerAddresses)
          .values({
            ...addressColumns(toAddress(body)),
            customerId,
            isDefaultShipping: shipping ?? false,
            isDefaultBilling: billing ?? false,
          })
          .returning()
        return toCustomerAddress(row!)
      })
    },

    updateAddress(customerId: string, addressId: string, body: UpdateAddress): Promise<CustomerAddress> {
      return write(async (tx) => {
        await lockCustomer(tx, customerId)
        const [existing] = await tx.select({ id: customerAddresses.id }).from(customerAddresses).where(ofCustomer(customerId, addressId))
        if (!existing) throw notFound('Address')
        await clearDefaults(tx, customerId, { shipping: body.is_default_shipping, billing: body.is_default_billing }, addressId)
        const [row] = await tx
          .update(customerAddresses)
          .set({
            ...addressColumns(body),
            isDefaultShipping: body.is_default_shipping,
            isDefaultBilling: body.is_default_billing,
            updatedAt: new Date(),
          })
          .where(ofCustomer(customerId, addressId))
          .returning()
        return toCustomerAddress(row!)
      })
    },

    /** Deleting a default address leaves the customer without that default; none is promoted. */
    deleteAddress(customerId: string, addressId: string): Promise<void> {
      return write(async (tx) => {
        await lockCustomer(tx, customerId)
        const deleted = await tx
          .delete(customerAddresses)
          .where(ofCustomer(customerId, addressId))
          .returning({ id: customerAddresses.id })
        if (deleted.length === 0) throw notFound('Address')
      })
    },
  }
}
