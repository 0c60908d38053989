/** CSV exports and imports (docs/csv.md): background jobs with a status, a file and a report. */
import { Type, type Static } from 'typebox'
import { EXPORT_STATUSES, IMPORT_RESOURCES, IMPORT_ROW_ACTIONS, IMPORT_STATUSES, ORDER_STATUSES, PAYMENT_STATUSES } from '../constants.js'
import { Nullable, PageOrCursorMeta, PaginationQuery, Timestamp, Uuid } from './common.js'

export const ProductExportFilters = Type.Object(
  {
    is_active: Type.Optional(Type.Boolean({ description: 'Only active (true) or inactive (false) products' })),
    category_id: Type.Optional(Uuid),
    updated_after: Type.Optional(Timestamp),
  },
  { additionalProperties: false, title: 'ProductExportFilters' },
)
export type ProductExportFilters = Static<typeof ProductExportFilters>
export const CustomerExportFilters = Type.Object(
  {
    created_after: Type.Optional(Timestamp),
    created_before: Type.Optional(Timestamp),
    group_id: Type.Optional(Uuid),
  },
  { additionalProperties: false, title: 'CustomerExportFilters' },
)
export type CustomerExportFilters = Static<typeof CustomerExportFilters>
export const OrderExportFilters = Type.Object(
  {
    status: Type.Optional(Type.Enum([...ORDER_STATUSES])),
    payment_status: Type.Optional(Type.Enum([...PAYMENT_STATUSES])),
    created_after: Type.Optional(Timestamp),
    created_before: Type.Optional(Timestamp),
    customer_id: Type.Optional(Uuid),
  },
  { additionalProperties: false, title: 'OrderExportFilters' },
)
export type OrderExportFilters = Static<typeof OrderExportFilters>

export const CreateExport = Type.Object(
  {
    resource: Type.Enum(['products', 'customers', 'orders'], { description: 'products (a row per variant), customers, or orders (a row per line)' }),
    filters: Type.Optional(
      Type.Union([ProductExportFilters, CustomerExportFilters, OrderExportFilters], { description: "Which ones: the resource's filters (ProductExportFilters, CustomerExportFilters, OrderExportFilters)" }),
    ),
  },
  { additionalProperties: false, title: 'CreateExportRequest', description: 'What to export, and which' },
)
/** The filters each resource takes. */
export const EXPORT_FILTERS = { products: ProductExportFilters, customers: CustomerExportFilters, orders: OrderExportFilters } as const
export type CreateExport = Static<typeof CreateExport>

export const Export = Type.Object(
  {
    id: Uuid,
    resource: Type.Enum(['products', 'customers', 'orders']),
    filters: Type.Record(Type.String(), Type.Unknown()),
    status: Type.Enum([...EXPORT_STATUSES]),
    row_count: Type.Integer({ description: 'Rows written (after the header)' }),
    size: Nullable(Type.Integer({ description: 'The file’s size in bytes, once completed' })),
    download_url: Nullable(Type.String({ description: 'GET it (with your credentials) to download the file, once completed' })),
    error: Nullable(Type.String()),
    created_at: Timestamp,
    started_at: Nullable(Timestamp),
    completed_at: Nullable(Timestamp),
  },
  { title: 'Export', description: 'A CSV export: made by the worker in the background, downloaded once completed' },
)
export type Export = Static<typeof Export>
export const ExportList = Type.Object({ exports: Type.Array(Export), meta: PageOrCursorMeta }, { title: 'ExportList', description: 'A page of exports, newest first' })
export type ExportList = Static<typeof ExportList>

export const ImportFileForm = Type.Object(
  { file: Type.String({ format: 'binary', description: 'The CSV file' }) },
  { additionalProperties: false, title: 'ImportFileForm', description: 'A CSV file sent as a form' },
)
export const CreateImportQuery = Type.Object({
  resource: Type.Enum([...IMPORT_RESOURCES], { description: 'What the file holds (with a multipart body, the `resource` field may say it instead)' }),
  dry_run: Type.Optional(Type.Boolean({ description: 'Report what each row would do and write nothing (POST /imports/{id}/apply then runs it)' })),
})
export type CreateImportQuery = Static<typeof CreateImportQuery>

export const Import = Type.Object(
  {
    id: Uuid,
    resource: Type.Enum([...IMPORT_RESOURCES]),
    dry_run: Type.Boolean(),
    status: Type.Enum([...IMPORT_STATUSES], {
      description: 'pending, running, then validated (a dry run: nothing written), completed, or failed (the file could not be read: see error)',
    }),
    file_name: Nullable(Type.String()),
    size: Type.Integer({ description: 'The file’s size in bytes' }),
    processed_rows: Type.Integer({ description: 'Data rows handled so far (the header not counted)' }),
    created: Type.Integer({ description: 'Rows that made (or in a dry run would make) a product or customer' }),
    updated: Type.Integer({ description: 'Rows that changed (or would change) one' }),
    refused: Type.Integer({ description: 'Rows refused: GET /imports/{id}/rows?action=refuse says why' }),
    error: Nullable(Type.String()),
    created_at: Timestamp,
    started_at: Nullable(Timestamp),
    completed_at: Nullable(Timestamp),
  },
  { title: 'Import', description: 'A CSV import: validated and, unless a dry run, applied in batches by the worker' },
)
export type Import = Static<typeof Import>
export const ImportList = Type.Object({ imports: Type.Array(Import), meta: PageOrCursorMeta }, { title: 'ImportList', description: 'A page of imports, newest first' })
export type ImportList = Static<typeof ImportList>

export const ImportRow = Type.Object(
  {
    row: Type.Integer({ description: 'The row’s number in the file, the header being 1' }),
    action: Type.Enum([...IMPORT_ROW_ACTIONS]),
    resource_id: Nullable(Uuid),
    key: Nullable(Type.String({ description: 'What names the row: the product’s id or slug, the customer’s id or email' })),
    reason: Nullable(Type.String({ description: 'Why the row was refused' })),
  },
  { title: 'ImportRow', description: 'What one row of an import did, or would do in a dry run' },
)
export type ImportRow = Static<typeof ImportRow>
export const ImportRowList = Type.Object({ rows: Type.Array(ImportRow), meta: PageOrCursorMeta }, { title: 'ImportRowList', description: 'A page of an import’s report, by row' })
export type ImportRowList = Static<typeof ImportRowList>
export const ImportRowsQuery = Type.Object({
  ...PaginationQuery.properties,
  action: Type.Optional(Type.Enum([...IMPORT_ROW_ACTIONS], { description: 'Only these rows (refuse: the refused rows and why)' })),
})
export type ImportRowsQuery = Static<typeof ImportRowsQuery>
