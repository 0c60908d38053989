/**
 * Writes one CSV export (docs/csv.md): the rows walked by a database cursor, turned into CSV by
 * csv-stringify and streamed into the file storage, so memory stays flat whatever the size.
 * UTF-8 with a byte order mark (spreadsheets then read accents right), CRLF line ends (RFC 4180).
 */
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { stringify } from 'csv-stringify'
import type { ExportResource } from '@commerce/domain'
import {
  customerExportRows,
  orderExportRows,
  productExportColumns,
  productExportRows,
  type CustomerExportFilters,
  type OrderExportFilters,
  type ProductExportFilters,
} from '@commerce/db'
import type postgres from 'postgres'
import type { FileStorage } from '@commerce/storage'
import { listCell, moneyCell, textCell } from './cells.js'
import {
  CUSTOMER_COLUMNS,
  ORDER_COLUMNS,
  PRODUCT_COLUMNS,
  SHIPPING_ADDRESS_FIELDS,
  attributeColumn,
  productCompareAtColumn,
  productPriceColumn,
  stockColumn,
  variantCompareAtColumn,
  variantPriceColumn,
} from './columns.js'
import { attributeCell, optionsCell, tagsCell, variantOptionsCell } from './product-cells.js'

interface Table {
  header: string[]
  records: AsyncIterable<string[]>
}

export const exportKey = (id: string) => `private/exports/${id}.csv`

/** Writes the export's file; answers its size and the rows written (after the header). */
export async function writeExport(
  sql: postgres.Sql,
  storage: FileStorage,
  job: { id: string; resource: ExportResource; filters: Record<string, unknown> },
  signal?: AbortSignal,
): Promise<{ storageKey: string; sizeBytes: number; rowCount: number }> {
  const table = await tableOf(sql, job.resource, job.filters)
  let rowCount = 0
  const counted = (async function* () {
    for await (const record of table.records) {
      // A worker that stops leaves the export to the next one, which writes it again.
      if (signal?.aborted) throw new Error('The worker is stopping')
      rowCount++
      yield record
    }
  })()
  const csv = stringify({ header: true, columns: table.header, bom: true, record_delimiter: 'windows' })
  const storageKey = exportKey(job.id)
  // The storage reads the CSV as it is made; a failure on either side ends both.
  const stored = storage.putStream(storageKey, csv, 'text/csv; charset=utf-8').catch((error: unknown) => {
    csv.destroy(error as Error)
    throw error
  })
  const [sizeBytes] = await Promise.all([stored, pipeline(Readable.from(counted), csv)])
  return { storageKey, sizeBytes, rowCount }
}

async function tableOf(sql: postgres.Sql, resource: ExportResource, filters: Record<string, unknown>): Promise<Table> {
  if (resource === 'products') return productTable(sql, filters)
  if (resource === 'customers') return customerTable(sql, filters)
  return orderTable(sql, filters)
}

const text = (value: unknown) => (typeof value === 'string' ? value : undefined)

async function productTable(sql: postgres.Sql, filters: Record<string, unknown>): Promise<Table> {
  const { locations, currencies, compareAtCurrencies, attributes } = await productExportColumns(sql)
  const productAttributes = attributes.filter((definition) => definition.owner === 'product').map((definition) => definition.key)
  const variantAttributes = attributes.filter((definition) => definition.owner === 'variant').map((definition) => definition.key)
  const compared = (currency: string) => compareAtCurrencies.includes(currency)
  const header = [
    ...PRODUCT_COLUMNS,
    ...productAttributes.map((key) => attributeColumn('product', key)),
    ...variantAttributes.map((key) => attributeColumn('variant', key)),
    ...currencies.flatMap((currency) => [
      productPriceColumn(currency),
      variantPriceColumn(currency),
      ...(compared(currency) ? [productCompareAtColumn(currency), variantCompareAtColumn(currency)] : []),
    ]),
    ...locations.map((location) => stockColumn(location.name)),
  ]
  const query: ProductExportFilters = { isActive: typeof filters.is_active === 'boolean' ? filters.is_active : undefined, categoryId: text(filters.category_id), updatedAfter: text(filters.updated_after) }
  async function* records() {
    for await (const page of productExportRows(sql, query)) {
      for (const row of page) {
        const variant = row.variantId !== null
        const money = (minor: string | null) => moneyCell(minor, row.currency)
        yield [
          row.id,
          row.slug,
          textCell(row.title),
          textCell(row.description),
          textCell(row.sku),
          row.currency,
          money(row.priceMinor),
          row.weight ?? '',
          row.weightUnit,
          String(row.isActive),
          textCell(row.imageUrl),
          listCell(row.categories),
          row.status,
          row.publishedAt ?? '',
          money(row.compareAtPriceMinor),
          tagsCell(row.tags),
          textCell(row.productType),
          textCell(row.vendor),
          row.barcode ?? '',
          row.length ?? '',
          row.width ?? '',
          row.height ?? '',
          row.dimensionUnit,
          row.hsCode ?? '',
          row.countryOfOrigin ?? '',
          textCell(row.seoTitle),
          textCell(row.seoDescription),
          optionsCell(row.options),
          row.variantId ?? '',
          textCell(row.variantTitle),
          textCell(row.variantSku),
          money(row.variantPriceMinor),
          money(row.variantCompareAtPriceMinor),
          row.variantBarcode ?? '',
          variant ? variantOptionsCell(row.variantOptions ?? {}) : '',
          row.variantWeight ?? '',
          row.variantWeightUnit ?? '',
          ...productAttributes.map((key) => attributeCell(row.attributes[key])),
          ...variantAttributes.map((key) => attributeCell(row.variantAttributes?.[key])),
          ...currencies.flatMap((currency) => {
            const own = row.prices?.[currency]
            const ofVariant = row.variantPrices?.[currency]
            const cells = [moneyCell(own?.[0] ?? null, currency), moneyCell(ofVariant?.[0] ?? null, currency)]
            return compared(currency) ? [...cells, moneyCell(own?.[1] ?? null, currency), moneyCell(ofVariant?.[1] ?? null, currency)] : cells
          }),
          ...locations.map((location) => String(row.stock?.[location.id] ?? '')),
        ]
      }
    }
  }
  return { header, records: records() }
}

function customerTable(sql: postgres.Sql, filters: Record<string, unknown>): Table {
  const query: CustomerExportFilters = { createdAfter: text(filters.created_after), createdBefore: text(filters.created_before), groupId: text(filters.group_id) }
  async function* records() {
    for await (const page of customerExportRows(sql, query)) {
      for (const row of page) {
        yield [row.id, textCell(row.email), textCell(row.firstName), textCell(row.lastName), textCell(row.phone), listCell(row.groups), row.createdAt]
      }
    }
  }
  return { header: [...CUSTOMER_COLUMNS], records: records() }
}

function orderTable(sql: postgres.Sql, filters: Record<string, unknown>): Table {
  const query: OrderExportFilters = {
    status: text(filters.status),
    paymentStatus: text(filters.payment_status),
    createdAfter: text(filters.created_after),
    createdBefore: text(filters.created_before),
    customerId: text(filters.customer_id),
  }
  async function* records() {
    for await (const page of orderExportRows(sql, query)) {
      for (const row of page) {
        const money = (minor: string) => moneyCell(minor, row.currency)
        yield [
          row.id,
          row.orderNumber,
          row.createdAt,
          row.status,
          row.paymentStatus,
          row.fulfillmentStatus,
          row.customerId ?? '',
          textCell(row.email),
          row.currency,
          money(row.subtotalMinor),
          money(row.discountMinor),
          money(row.taxMinor),
          money(row.shippingMinor),
          money(row.totalMinor),
          money(row.paidMinor),
          money(row.refundedMinor),
          listCell(row.coupons),
          textCell(row.shippingMethod),
          ...SHIPPING_ADDRESS_FIELDS.map((field) => textCell(row.shippingAddress?.[field] ?? null)),
          row.lineId,
          row.lineProductId ?? '',
          row.lineVariantId ?? '',
          textCell(row.lineSku),
          textCell(row.lineTitle),
          textCell(row.lineVariantTitle),
          String(row.lineQuantity),
          money(row.lineUnitPriceMinor),
          money(row.lineDiscountMinor),
          money(row.lineTaxMinor),
          money(row.lineTotalMinor),
          String(row.lineFulfilled),
          String(row.lineReturned),
          String(row.lineCanceled),
        ]
      }
    }
  }
  return { header: [...ORDER_COLUMNS], records: records() }
}
