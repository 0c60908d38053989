/**
 * Row types of hand-written SQL, derived from the Drizzle tables, and the JSON objects that carry
 * them: a column renamed (or retyped) in the schema fails the typecheck of every statement that
 * reads it, instead of a hand-kept interface that still compiles.
 */
import { getTableColumns, type Table } from 'drizzle-orm'

/**
 * A column's value as JSON (json_build_object) or a raw row of createDb's client gives it: an
 * instant as its text (ISO 8601 from JSON; PostgreSQL's own format raw: `new Date()` reads both),
 * a bigint as a number. Raw rows read bigint columns as text: their statements cast them.
 */
export type JsonValue<V> = V extends Date ? string : V extends bigint ? number : V

/** A row of a table (`typeof table.$inferSelect`) as JSON or raw SQL gives it. */
export type JsonRow<Row> = { [K in keyof Row]: JsonValue<Row[K]> }

/** Some columns of `T`, by their TypeScript names, as JSON gives them. */
export type JsonOf<T extends Table, K extends keyof T['$inferSelect']> = Pick<JsonRow<T['$inferSelect']>, K>

/** The columns `keys` of a row `alias` of `table` as SQL (`alias.column_name`), by their TypeScript names. */
export function columnsOf<T extends Table, K extends keyof T['$inferSelect'] & string>(table: T, alias: string, keys: readonly K[]): { [P in K]: string } {
  const columns = getTableColumns(table) as Record<string, { name: string }>
  return Object.fromEntries(keys.map((key) => [key, `${alias}.${columns[key]!.name}`])) as { [P in K]: string }
}

/**
 * `json_build_object('key', alias.column, …)`: the columns `keys` of a row `alias` of `table`,
 * each under its TypeScript name, so that the object is a JsonOf<table, keys>: the SQL and the
 * type come from one list of names.
 */
export function jsonColumns<T extends Table, K extends keyof T['$inferSelect'] & string>(table: T, alias: string, keys: readonly K[]): string {
  return jsonObject(columnsOf(table, alias, keys))
}

/**
 * `json_build_object(…)` of SQL expressions by key: written `jsonObject<Row>({ … })`, every key
 * of Row must be there and no other.
 */
export function jsonObject<Row>(fields: { [K in keyof Row]-?: string }): string {
  return `json_build_object(${Object.entries<string>(fields).map(([key, expression]) => `'${key}', ${expression}`).join(', ')})`
}
