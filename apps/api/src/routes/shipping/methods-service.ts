/** Shipping methods: admin CRUD of what the shipping rates are computed from. */
import { eq, sql } from 'drizzle-orm'
import {
  massOfKilograms,
  toMajorUnits,
  toMinorUnits,
  type CreateShippingMethod,
  type ListShippingMethodsQuery,
  type ShippingMethod,
  type UpdateShippingMethod,
} from '@commerce/domain'
import { shippingMethods, type Database } from '@commerce/db'
import { invalidField, notFound } from '../../errors.js'
import { fieldValue, knownCurrency } from '../../fields.js'
import { key, keyset, listTable } from '../../list-cursor.js'

type ShippingMethodRow = typeof shippingMethods.$inferSelect
type ShippingMethodColumns = Omit<typeof shippingMethods.$inferInsert, 'id' | 'createdAt' | 'updatedAt'>
type ShippingMethodFields = Omit<ShippingMethod, 'id' | 'created_at' | 'updated_at'>

function toShippingMethod(row: ShippingMethodRow): ShippingMethod {
  const money = (minor: number) => toMajorUnits(minor, row.currency)
  return {
    id: row.id,
    name: row.name,
    currency: row.currency,
    countries: row.countries,
    base_price: money(row.basePriceMinor),
    price_per_kg: money(row.pricePerKgMinor),
    free_over: row.freeOverMinor === null ? null : money(row.freeOverMinor),
    min_weight: row.minWeightKg,
    max_weight: row.maxWeightKg,
    estimated_days: row.estimatedDays,
    is_active: row.isActive,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

/**
 * The stored columns of a consistent method, or a validation error naming the field at fault.
 * `sent` is the fields an update sent (undefined on create): a kept value is not at fault, so a
 * new currency that cannot hold a kept amount blames `currency`, and a new bound blames itself.
 */
function shippingMethodColumns(fields: ShippingMethodFields, sent?: ReadonlySet<string>): ShippingMethodColumns {
  const blame = (field: string) => (!sent || sent.has(field) || !sent.has('currency') ? field : 'currency')
  const { currency } = fields
  knownCurrency(currency)
  const minor = (field: string, amount: number) => fieldValue(blame(field), () => toMinorUnits(amount, currency))
  // Exact masses, so 4-decimal bounds compare without float error.
  const minMass = fields.min_weight === null ? null : fieldValue('min_weight', () => massOfKilograms(fields.min_weight!))
  const maxMass = fields.max_weight === null ? null : fieldValue('max_weight', () => massOfKilograms(fields.max_weight!))
  if (minMass !== null && maxMass !== null && maxMass < minMass) {
    if (sent?.has('min_weight') && !sent.has('max_weight')) {
      throw invalidField('min_weight', "Field 'min_weight' must not be above 'max_weight'")
    }
    throw invalidField('max_weight', "Field 'max_weight' must not be below 'min_weight'")
  }
  return {
    name: fields.name,
    currency,
    countries: fields.countries,
    basePriceMinor: minor('base_price', fields.base_price),
    pricePerKgMinor: minor('price_per_kg', fields.price_per_kg),
    freeOverMinor: fields.free_over === null ? null : minor('free_over', fields.free_over),
    minWeightKg: fields.min_weight,
    maxWeightKg: fields.max_weight,
    estimatedDays: fields.estimated_days,
    isActive: fields.is_active,
  }
}

function mergeUpdate(current: ShippingMethod, body: UpdateShippingMethod): ShippingMethodFields {
  const pick = <K extends keyof ShippingMethodFields>(key: K): ShippingMethodFields[K] =>
    (body[key] !== undefined ? body[key] : current[key]) as ShippingMethodFields[K]
  return {
    name: pick('name'),
    currency: pick('currency'),
    countries: pick('countries'),
    base_price: pick('base_price'),
    price_per_kg: pick('price_per_kg'),
    free_over: pick('free_over'),
    min_weight: pick('min_weight'),
    max_weight: pick('max_weight'),
    estimated_days: pick('estimated_days'),
    is_active: pick('is_active'),
  }
}

/** By name, case-insensitively whatever the server's collation: shipping_methods_name_idx (lower(name), name, id). */
const SHIPPING_METHODS_KEYSET = keyset('shipping_methods', 'asc', [key.text(sql`lower(${shippingMethods.name})`), key.text(shippingMethods.name), key.uuid(shippingMethods.id)])

export function createShippingMethodService(db: Database) {
  return {
    async list(query: ListShippingMethodsQuery) {
      const { rows, meta } = await listTable(db, SHIPPING_METHODS_KEYSET, shippingMethods, query.is_active === undefined ? undefined : eq(shippingMethods.isActive, query.is_active), query)
      return { shipping_methods: rows.map(toShippingMethod), meta }
    },

    async get(id: string): Promise<ShippingMethod> {
      const [row] = await db.select().from(shippingMethods).where(eq(shippingMethods.id, id))
      if (!row) throw notFound('Shipping method')
      return toShippingMethod(row)
    },

    async create(body: CreateShippingMethod): Promise<ShippingMethod> {
      const columns = shippingMethodColumns({
        name: body.name,
        currency: body.currency,
        countries: body.countries ?? [],
        base_price: body.base_price ?? 0,
        price_per_kg: body.price_per_kg ?? 0,
        free_over: body.free_over ?? null,
        min_weight: body.min_weight ?? null,
        max_weight: body.max_weight ?? null,
        estimated_days: body.estimated_days ?? null,
        is_active: body.is_active ?? true,
      })
      const [row] = await db.insert(shippingMethods).values(columns).returning()
      return toShippingMethod(row!)
    },

    /** Re-validates the whole method as it would be after the change; a new currency keeps the amounts shown. */
    update(id: string, body: UpdateShippingMethod): Promise<ShippingMethod> {
      return db.transaction(async (tx) => {
        const [current] = await tx.select().from(shippingMethods).where(eq(shippingMethods.id, id)).for('update')
        if (!current) throw notFound('Shipping method')
        const columns = shippingMethodColumns(mergeUpdate(toShippingMethod(current), body), new Set(Object.keys(body)))
        const [row] = await tx
          .update(shippingMethods)
          .set({ ...columns, updatedAt: new Date() })
          .where(eq(shippingMethods.id, id))
          .returning()
        return toShippingMethod(row!)
      })
    },

    /** Hard delete: carts that chose the method lose the choice (the foreign key sets it null). */
    async remove(id: string): Promise<void> {
      const deleted = await db.delete(shippingMethods).where(eq(shippingMethods.id, id)).returning({ id: shippingMethods.id })
      if (deleted.length === 0) throw notFound('Shipping method')
    },
  }
}
