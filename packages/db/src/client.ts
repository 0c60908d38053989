import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js'
import postgres from 'postgres'
import * as schema from './schema/index.js'
import { createEventAnnouncer } from './announce.js'
import { pipelineTransactions, type SqlClient } from './transaction.js'

export interface DatabaseConfig {
  url: string
  /** Connections in this process's pool (DATABASE_POOL_MAX). */
  poolMax?: number
  /** Statement timeout in milliseconds; 0 disables it. */
  statementTimeoutMs?: number
  /**
   * The longest a statement or transaction waits for a connection, in milliseconds: for one to be
   * made (DATABASE_CONNECT_TIMEOUT), or to come free (patches/README.md, postgres.js hunk 4). Default 5 s.
   */
  connectTimeoutMs?: number
  /** The name shown in pg_stat_activity. */
  applicationName?: string
  /**
   * Plan prepared statements once, with their parameters unknown, and never in parallel. For
   * pools whose statements fix their plan by their shape (the catalog reads): it saves the
   * planning that PostgreSQL would otherwise repeat on every execution.
   */
  genericPlans?: boolean
  /**
   * Connecting through a transaction pooler (PgBouncer in transaction mode): no session
   * settings are sent at connect (the pooler would refuse or drop them), so the statement
   * timeout and planner settings must be set on the database role instead (docs/operations.md, PgBouncer).
   */
  transactionPooler?: boolean
  /** Told when announcing committed events failed (their relays and feeds still find them). */
  onAnnounceError?: (error: unknown) => void
}

export type Database = PostgresJsDatabase<typeof schema>
/** A transaction or the database itself: what services write through. */
export type Executor = Database | Parameters<Parameters<Database['transaction']>[0]>[0]

export interface DatabaseHandle {
  db: Database
  sql: postgres.Sql
  close(): Promise<void>
}

const DEFAULT_CONNECT_TIMEOUT_MS = 5_000

/**
 * Seconds before a connection is made again after it failed or closed, by the number of failures
 * in a row: postgres.js's own (10 ms, 30 ms, 90 ms, … with jitter) capped at half a second instead
 * of 20 s. Connections are made when statements need them, so this wait is part of a request's
 * answer during an outage and of the recovery after it (it had grown to 8 s after 8 s down).
 */
function reconnectDelay(failures: number): number {
  return (0.5 + Math.random() / 2) * Math.min(3 ** failures / 100, 0.5)
}

export function createDb(config: DatabaseConfig): DatabaseHandle {
  const sql = postgres(config.url, {
    max: config.poolMax ?? 10,
    connect_timeout: (config.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS) / 1000,
    backoff: reconnectDelay,
    onnotice: () => {},
    connection: {
      // PgBouncer keeps application_name for each client; it is the one setting it passes on.
      application_name: config.applicationName ?? 'commerce',
      ...(config.statementTimeoutMs && !config.transactionPooler ? { statement_timeout: config.statementTimeoutMs } : {}),
      // jit off: a generic plan guesses a tenth of the table for a LIMIT it cannot see, which put a
      // translated list page's estimate past jit_above_cost; compiling took 258 ms of a 2 ms query.
      ...(config.genericPlans && !config.transactionPooler ? { plan_cache_mode: 'force_generic_plan', max_parallel_workers_per_gather: 0, jit: 'off' } : {}),
    },
  })
  const db = drizzle(sql, { schema })
  const announcer = createEventAnnouncer(sql, config.onAnnounceError)
  pipelineTransactions(db._.session, sql, announcer)
  return {
    db,
    sql,
    async close() {
      await announcer.flush()
      await sql.end({ timeout: 5 })
    },
  }
}

/**
 * The postgres.js client behind a database or a transaction, for hot paths that send fixed SQL
 * text (prepared once per connection by postgres.js) instead of building a query per call.
 * Drizzle's driver set this client to pass timestamps and JSON through as text (Drizzle maps
 * them itself): raw SQL reads timestamps as ISO strings, and sends timestamps as ISO strings and
 * json/jsonb parameters as JSON text (JSON.stringify them).
 */
export function sqlOf(executor: Executor): SqlClient {
  const client = (executor._.session as unknown as { client?: SqlClient }).client
  if (!client) throw new Error('sqlOf needs a postgres.js database or transaction')
  return client
}
