/** Tax rates: admin CRUD; one rate per country and region (case-insensitive), null region = the whole country. */
import { and, eq, ne, sql } from 'drizzle-orm'
import {
  DomainError,
  percentToPpm,
  ppmToPercent,
  type CreateTaxRate,
  type ListTaxRatesQuery,
  type TaxRate,
  type UpdateTaxRate,
} from '@commerce/domain'
import { isUniqueViolation, taxRates, type Database, type Executor } from '@commerce/db'
import { conflict, invalidField, notFound } from '../../errors.js'
import { key, keyset, listTable } from '../../list-cursor.js'

type TaxRateRow = typeof taxRates.$inferSelect

function toTaxRate(row: TaxRateRow): TaxRate {
  return {
    id: row.id,
    country: row.country,
    region: row.region,
    rate: ppmToPercent(row.ratePpm),
    name: row.name,
    rounding: row.rounding,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

function ratePpm(rate: number): number {
  try {
    return percentToPpm(rate)
  } catch (error) {
    if (error instanceof DomainError) throw invalidField('rate', `Field 'rate' is invalid: ${error.message}`)
    throw error
  }
}

const place = (country: string, region: string | null) => (region === null ? country : `${country} / ${region}`)

/**
 * By country, the whole-country rate first (no region: ''), then regions in a case-insensitive
 * order whatever the collation: tax_rates_list_idx.
 */
const TAX_RATES_KEYSET = keyset('tax_rates', 'asc', [
  key.text(taxRates.country),
  key.text(sql`coalesce(lower(${taxRates.region}), '')`),
  key.text(sql`coalesce(${taxRates.region}, '')`),
  key.uuid(taxRates.id),
])

export function createTaxRateService(db: Database) {
  /** The unique index's own expression, so the check and the index agree on what a clash is. */
  async function checkPlaceFree(tx: Executor, country: string, region: string | null, selfId?: string) {
    const [clash] = await tx
      .select({ id: taxRates.id })
      .from(taxRates)
      .where(
        and(
          eq(taxRates.country, country),
          sql`upper(coalesce(${taxRates.region}, '')) = upper(${region ?? ''})`,
          selfId ? ne(taxRates.id, selfId) : undefined,
        ),
      )
    if (clash) throw conflict(`A tax rate for ${place(country, region)} already exists`)
  }

  async function write<T>(work: (tx: Executor) => Promise<T>): Promise<T> {
    try {
      return await db.transaction(work)
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict('A tax rate for this country and region already exists')
      throw error
    }
  }

  return {
    async list(query: ListTaxRatesQuery) {
      const { rows, meta } = await listTable(db, TAX_RATES_KEYSET, taxRates, query.country === undefined ? undefined : eq(taxRates.country, query.country), query)
      return { tax_rates: rows.map(toTaxRate), meta }
    },

    async get(id: string): Promise<TaxRate> {
      const [row] = await db.select().from(taxRates).where(eq(taxRates.id, id))
      if (!row) throw notFound('Tax rate')
      return toTaxRate(row)
    },

    create(body: CreateTaxRate): Promise<TaxRate> {
      const values = { country: body.country, region: body.region ?? null, ratePpm: ratePpm(body.rate), name: body.name, rounding: body.rounding ?? 'line' }
      return write(async (tx) => {
        await checkPlaceFree(tx, values.country, values.region)
        const [row] = await tx.insert(taxRates).values(values).returning()
        return toTaxRate(row!)
      })
    },

    update(id: string, body: UpdateTaxRate): Promise<TaxRate> {
      return write(async (tx) => {
        const [current] = await tx.select().from(taxRates).where(eq(taxRates.id, id)).for('update')
        if (!current) throw notFound('Tax rate')
        const country = body.country ?? current.country
        const region = body.region !== undefined ? body.region : current.region
        if (body.country !== undefined || body.region !== undefined) await checkPlaceFree(tx, country, region, id)
        const [row] = await tx
          .update(taxRates)
          .set({
            country,
            region,
            ratePpm: body.rate === undefined ? undefined : ratePpm(body.rate),
            name: body.name,
            rounding: body.rounding,
            updatedAt: new Date(),
          })
          .where(eq(taxRates.id, id))
          .returning()
        return toTaxRate(row!)
      })
    },

    async remove(id: string): Promise<void> {
      const deleted = await db.delete(taxRates).where(eq(taxRates.id, id)).returning({ id: taxRates.id })
      if (deleted.length === 0) throw notFound('Tax rate')
    },
  }
}
