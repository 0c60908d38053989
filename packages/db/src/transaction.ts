/**
 * Transactions with one round trip less at each end. postgres.js's `begin()` waits for BEGIN's
 * answer before it sends the first statement, and sends COMMIT only once the work is done; here
 * BEGIN goes out with the first statement, and a unit of work may send COMMIT right behind its
 * last writes (`sendCommit`). On two shared cores each round trip wakes a backend and costs
 * both processes CPU (bench/README.md, Checkout). Every `db.transaction()` of a database made by
 * createDb runs this way; the work gets an ordinary Drizzle transaction.
 *
 * The transaction holds a connection reserved from the pool. When that connection is lost
 * under it, nothing more is sent on it and it is not handed back (postgres.js already counts it
 * as closed and would otherwise reuse a dead socket).
 */
import type { TablesRelationalConfig } from 'drizzle-orm'
import { PostgresJsSession, PostgresJsTransaction } from 'drizzle-orm/postgres-js'
import postgres from 'postgres'
import type { EventAnnouncer } from './announce.js'

/** The part of a postgres.js client a transaction lends out: statements as fixed text. */
export type SqlClient = Pick<postgres.Sql, 'unsafe'>

interface Connection {
  onclose: ((error: Error) => void) | null
}

interface TransactionState {
  reserved: postgres.ReservedSql
  connection: Connection | undefined
  /** Set when the connection closed under the transaction. */
  lost: Error | undefined
  /** The first statement that failed: the cause of every later "transaction is aborted". */
  failure: unknown
  /** COMMIT, once sent (by the work through sendCommit, or at the end). */
  commit: Promise<void> | undefined
  /** No statement may be sent any more: COMMIT or ROLLBACK is on its way. */
  ended: boolean
  /** The events written, announced once COMMIT has succeeded. */
  events: string[]
  /** Work that must wait for COMMIT (whenCommitted), run once it has succeeded. */
  afterCommit: (() => Promise<void>)[]
  announcer: EventAnnouncer
  /** Remembers the connection (to learn of its loss) when it runs the first statement. */
  onexecute: (connection: Connection) => true
}

const states = new WeakMap<SqlClient, TransactionState>()
/** Each database's announcer, by its postgres.js client (the statements sent outside a transaction). */
const announcers = new WeakMap<SqlClient, EventAnnouncer>()

/**
 * Has the ids of events just written through `client` announced once they are committed: after
 * the COMMIT of the transaction it belongs to (never, if it rolls back), or at once outside one.
 */
export function announceWhenCommitted(client: SqlClient, ids: readonly string[]): void {
  const state = states.get(client)
  if (state) state.events.push(...ids)
  else announcers.get(client)?.announce(ids)
}

/**
 * Has `work` run once what was written through `client` is committed: after the COMMIT of the
 * transaction it belongs to (never, if it rolls back; the transaction's runner awaits it before it
 * answers, with no lock held any more), or at once outside one. For calls to the outside world
 * that a decision written in the transaction asks for (a refund at the payment provider): they
 * must neither run for a decision rolled back nor hold the transaction's locks while they wait.
 * The work handles its own failures: the transaction is committed whatever it does.
 */
export async function whenCommitted(client: SqlClient, work: () => Promise<void>): Promise<void> {
  const state = states.get(client)
  if (state) state.afterCommit.push(work)
  else await work()
}

/** Told of the products whose sellable stock (inventory_quantity: theirs or a variant's) a committed statement changed. */
export type StockListener = (productIds: readonly string[]) => void

/** Each database's stock listeners, by its client and by the client of each of its transactions. */
const stockListeners = new WeakMap<SqlClient, StockListener[]>()

/**
 * Has `listener` told, once committed, of every product whose sellable stock a statement of this
 * database changes (the statements of stock-moves.ts report them through noteStockMoved): an API
 * instance drops what its caches show of them. It runs as the change's request awaits it: it must
 * not throw, nor take long.
 */
export function onStockMoved(client: SqlClient, listener: StockListener): void {
  stockListeners.get(client)?.push(listener)
}

/** Has the stock listeners of the database behind `client` told of these products once what `client` wrote is committed (whenCommitted). */
export async function noteStockMoved(client: SqlClient, productIds: readonly string[]): Promise<void> {
  const listeners = stockListeners.get(client)
  if (!listeners?.length || productIds.length === 0) return
  await whenCommitted(client, async () => {
    for (const listener of listeners) listener(productIds)
  })
}

const ABORTED = '25P02'

function isAborted(error: unknown): boolean {
  return (error as { code?: string } | null)?.code === ABORTED
}

/**
 * An error that ends the connection: postgres.js's own (CONNECTION_CLOSED, …), a socket's, or
 * the server's FATAL (the backend terminated). It may come before postgres.js's close handler
 * has run, so the connection must not be handed back on the strength of that handler alone.
 */
function endsConnection(error: unknown): boolean {
  const { code, severity } = (error ?? {}) as { code?: unknown; severity?: unknown }
  if (severity === 'FATAL' || severity === 'PANIC') return true
  return typeof code === 'string' && (code.startsWith('CONNECTION_') || code.startsWith('E') || code.startsWith('57P') || code.startsWith('08'))
}

/** Keeps the first failure of a statement (the cause of later "transaction is aborted"), and a lost connection. */
function noteFailure(state: TransactionState, error: unknown): void {
  if (endsConnection(error)) state.lost ??= error instanceof Error ? error : new Error(String(error))
  if (state.failure === undefined && !isAborted(error)) state.failure = error
}

/** Sends BEGIN (not awaited: it travels with the next statement). */
function sendBegin(state: TransactionState): void {
  const begin = state.reserved.unsafe('begin', [], {
    onexecute: state.onexecute,
    // postgres.js's own option (begin() uses it), missing from its types.
  } as unknown as postgres.UnsafeQueryOptions)
  begin.catch((error: unknown) => noteFailure(state, error))
}

/** The client a transaction's statements go through: refuses once the transaction has ended. */
function clientOf(state: TransactionState): SqlClient {
  const unsafe = (query: string, parameters?: postgres.ParameterOrJSON<never>[], options?: postgres.UnsafeQueryOptions) => {
    if (state.lost) throw state.lost
    if (state.ended) throw new Error('This transaction has ended: a statement sent now would run outside it')
    const pending = state.reserved.unsafe(query, parameters, options)
    // Sends it now, in call order, and keeps its failure: a statement nobody awaits still fails
    // the transaction.
    pending.catch((error: unknown) => noteFailure(state, error))
    return pending
  }
  return { unsafe: unsafe as SqlClient['unsafe'] }
}

/** Sends COMMIT (or ends the transaction) and answers when PostgreSQL has committed. */
function commit(state: TransactionState): Promise<void> {
  state.ended = true
  if (state.lost) return Promise.reject(state.lost)
  return state.reserved.unsafe('commit').then((result) => {
    // COMMIT of a transaction a statement failed in answers ROLLBACK.
    if (result.command !== 'COMMIT') throw state.failure ?? new Error(`COMMIT answered ${result.command}`)
    state.announcer.announce(state.events)
  })
}

/**
 * Sends COMMIT now, behind the statements this transaction sent so far, instead of after the
 * work has answered. Nothing may be sent in the transaction afterwards, and nothing the work does
 * afterwards may fail: its writes are committed. The work still awaits its statements; a failed
 * one makes the whole transaction roll back and the work throws its error as usual.
 */
export function sendCommit(client: SqlClient): Promise<void> {
  const state = states.get(client)
  if (!state) throw new Error('sendCommit needs the client of a transaction')
  if (state.commit) return state.commit
  state.commit = commit(state)
  // Awaited by the runner; a failure here is the work's failure too.
  state.commit.catch(() => {})
  return state.commit
}

type SessionArguments = ConstructorParameters<typeof PostgresJsSession>
type Transaction = PostgresJsTransaction<Record<string, unknown>, TablesRelationalConfig>
type TransactionConfig = Parameters<Transaction['setTransaction']>[0]

/**
 * Replaces the Drizzle session's `transaction()` (which uses postgres.js `begin()`) with the
 * pipelined one. Not offered inside it: nested transactions (savepoints through Drizzle; a work
 * takes its own savepoints with plain statements) and relational queries (`tx.query`).
 */
export function pipelineTransactions(session: object, sql: postgres.Sql, announcer: EventAnnouncer): void {
  announcers.set(sql, announcer)
  const listeners: StockListener[] = []
  stockListeners.set(sql, listeners)
  const { dialect, options } = session as { dialect: SessionArguments[1]; options: SessionArguments[3] }
  const transaction = async <T>(work: (tx: Transaction) => Promise<T>, config?: TransactionConfig): Promise<T> => {
    const reserved = await sql.reserve()
    const state: TransactionState = {
      reserved,
      connection: undefined,
      lost: undefined,
      failure: undefined,
      commit: undefined,
      ended: false,
      events: [],
      afterCommit: [],
      announcer,
      // The connection is remembered to learn of its loss (what postgres.js's begin() does too).
      onexecute: (connection: Connection) => {
        state.connection = connection
        connection.onclose = (error) => {
          state.lost = error
        }
        return true
      },
    }
    // BEGIN is not awaited: it travels with the first statement.
    sendBegin(state)
    const client = clientOf(state)
    states.set(client, state)
    stockListeners.set(client, listeners)
    // Drizzle types a transaction's session over postgres.js's TransactionSql, which it does not
    // declare as a Sql; the session only ever calls unsafe() on its client. Without the schema:
    // Drizzle would build a relational query builder per table for every transaction (a few
    // percent of a checkout's CPU), and no transaction uses `tx.query`.
    const session = new PostgresJsSession(client as postgres.Sql, dialect, undefined, options)
    const tx: Transaction = new PostgresJsTransaction(dialect, session as never, undefined)
    let result: T
    try {
      if (config) await tx.setTransaction(config)
      try {
        result = await work(tx)
      } catch (error) {
        noteFailure(state, error)
        if (state.commit) await state.commit.catch(() => {})
        else if (!state.lost) {
          state.ended = true
          await reserved.unsafe('rollback').catch(() => {})
        }
        throw isAborted(error) && state.failure !== undefined ? state.failure : error
      }
      await (state.commit ?? commit(state))
    } finally {
      state.ended = true
      if (!state.lost) {
        if (state.connection) state.connection.onclose = null
        reserved.release()
      }
    }
    // Committed, its connection back in the pool: whatever follows must not fail the transaction.
    for (const after of state.afterCommit) await after().catch(() => {})
    return result
  }
  ;(session as { transaction: unknown }).transaction = transaction
}
