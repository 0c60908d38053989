/** Tax rates: admin CRUD; one rate per country and region (case-insensitive), null region = the whole country. */
import { and, asc, count, eq, ne, sql, type SQL } from 'drizzle-orm'
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
import { pageMeta } from '../../list-totals.js'

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
      const page = query.page ?? 1
      const perPage = query.per_page ?? 20
      const conditions: SQL[] = []
      if (query.country !== undefined) conditions.push(eq(taxRates.country, query.country))
      const where = and(...conditions)
      const [rows, [counted]] = await Promise.all([
        db
          .select()
          .from(taxRates)
          .where(where)
          // The whole-country rate first, then regions in a case-insensitive order whatever the collation.
          .orderBy(
            asc(taxRates.country),
            asc(sql`${taxRates.region} is not null`),
            asc(sql`lower(${taxRates.region})`),
            asc(taxRates.region),
            asc(taxRates.id),
          )
          .limit(perPage)
          .offset((page - 1) * perPage),
        db.select({ total: count() }).from(taxRates).where(where),
      ])
      return { tax_rates: rows.map(toTaxRate), meta: pageMeta(page, perPage, counted!.total) }
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
