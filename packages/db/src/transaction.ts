/**
 * Transactions with one round trip less at each end. postgres.js's `begin()` waits for BEGIN's
 * answer before it sends the first statement, and sends COMMIT only once the work is done; here
 * BEGIN goes out with the first statement, and a unit of work may send COMMIT right behind its
 * last writes (`sendCommit`). On two shared cores each round trip wakes a backend and costs
 * both processes CPU (bench/README.md, Checkout). Every `db.transaction()` of a database made by
 * createDb runs this way; the work gets an ordinary Drizzle transaction.
 *
 * A transaction may also defer BEGIN (`{ deferBegin: true }`, for the checkout's two round
 * trips): its first statement then opens an implicit transaction block (sent with Flush, not
 * Sync: patches/postgres@3.4.9.patch), and a last statement sent with `sendLast` commits it with
 * its own Sync. BEGIN and COMMIT are then neither sent nor run, and PostgreSQL answers each round
 * trip in one write. Any other statement after the first turns the block into an ordinary
 * transaction (BEGIN converts an implicit block, keeping what it did and the locks it took).
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
  announcer: EventAnnouncer
  /**
   * BEGIN deferred and not sent yet: 'idle' until the first statement, 'first' while the
   * implicit block it opened is open, 'ending' once a statement was sent to commit it;
   * undefined for an ordinary transaction.
   */
  implicit: 'idle' | 'first' | 'ending' | undefined
  /** The first statement of an implicit block, until it has been answered. */
  first: Promise<unknown> | undefined
  /** Its error, when it failed: the block ended with it. */
  firstFailure: unknown
  /** Remembers the connection (to learn of its loss) when it runs the first statement. */
  onexecute: (connection: Connection) => true
}

/**
 * Whether this postgres.js can end a query with Flush (patches/postgres@3.4.9.patch). Without the
 * patch `{ flush: true }` would be ignored and the first statement would commit on its own Sync,
 * so BEGIN is then never deferred.
 */
const CAN_FLUSH = (postgres as unknown as { flushQueries?: boolean }).flushQueries === true

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

/**
 * In a transaction whose BEGIN is deferred: how this statement goes out. The first opens the
 * implicit block (Flush); the one sendLast sends closes it (Sync); any other first has BEGIN
 * sent, which makes the block an ordinary transaction.
 */
function implicitOptions(state: TransactionState, options: postgres.UnsafeQueryOptions | undefined): postgres.UnsafeQueryOptions | undefined {
  switch (state.implicit) {
    case 'idle':
      state.implicit = 'first'
      return { ...options, flush: true, onexecute: state.onexecute } as postgres.UnsafeQueryOptions
    case 'first':
      // Nothing may follow a statement sent with Flush before it is answered: after its error,
      // PostgreSQL would skip what follows up to the next Sync.
      if (state.first) throw new Error('In a transaction whose BEGIN is deferred, await the first statement before sending another')
      state.implicit = undefined
      sendBegin(state)
      return options
    case 'ending':
      state.ended = true
      return options
    default:
      return options
  }
}

/** The client a transaction's statements go through: refuses once the transaction has ended. */
function clientOf(state: TransactionState): SqlClient {
  const unsafe = (query: string, parameters?: postgres.ParameterOrJSON<never>[], options?: postgres.UnsafeQueryOptions) => {
    if (state.lost) throw state.lost
    if (state.ended) throw new Error('This transaction has ended: a statement sent now would run outside it')
    if (state.implicit === 'first' && state.firstFailure !== undefined) throw state.firstFailure
    const first = state.implicit === 'idle'
    const pending = state.reserved.unsafe(query, parameters, state.implicit ? implicitOptions(state, options) : options)
    if (first) {
      state.first = pending
      pending.then(
        () => {
          state.first = undefined
        },
        (error: unknown) => {
          state.first = undefined
          state.firstFailure = error
        },
      )
    }
    // Sends it now, in call order, and keeps its failure: a statement nobody awaits still fails
    // the transaction.
    pending.catch((error: unknown) => noteFailure(state, error))
    return pending
  }
  return { unsafe: unsafe as SqlClient['unsafe'] }
}

/** Sends COMMIT (or ends the transaction) and answers when PostgreSQL has committed. */
function commit(state: TransactionState): Promise<void> {
  if (state.implicit === 'first') return endImplicit(state).then(() => commit(state))
  state.ended = true
  if (state.lost) return Promise.reject(state.lost)
  // Nothing was sent: there is nothing to commit.
  if (state.implicit === 'idle') return Promise.resolve()
  return state.reserved.unsafe('commit').then((result) => {
    // COMMIT of a transaction a statement failed in answers ROLLBACK.
    if (result.command !== 'COMMIT') throw state.failure ?? new Error(`COMMIT answered ${result.command}`)
    state.announcer.announce(state.events)
  })
}

/**
 * Turns the implicit block the first statement opened into an ordinary transaction (BEGIN),
 * once that statement has been answered; fails with its error when it failed (its block has
 * ended with it).
 */
async function endImplicit(state: TransactionState): Promise<void> {
  state.ended = true
  if (state.first) await state.first.catch(() => {})
  if (state.firstFailure !== undefined) throw state.firstFailure
  if (state.lost) throw state.lost
  state.implicit = undefined
  state.ended = false
  sendBegin(state)
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

/**
 * Sends the transaction's last statement (`send` sends it through `client`) and COMMIT behind it,
 * as sendCommit does; in a transaction whose BEGIN was deferred and that sent only its first
 * statement so far, the statement's own Sync commits the implicit block instead (no COMMIT).
 * Answers the statement's result and the commit.
 */
export function sendLast<T>(client: SqlClient, send: () => T): [T, Promise<void>] {
  const state = states.get(client)
  if (!state) throw new Error('sendLast needs the client of a transaction')
  if (state.implicit !== 'first' || state.first || state.firstFailure !== undefined) return [send(), sendCommit(client)]
  state.implicit = 'ending'
  const result = send()
  // Answered once its Sync has committed the block (or failed with the block rolled back).
  state.commit = Promise.resolve(result).then(() => state.announcer.announce(state.events))
  state.commit.catch(() => {})
  return [result, state.commit]
}

type SessionArguments = ConstructorParameters<typeof PostgresJsSession>
type Transaction = PostgresJsTransaction<Record<string, unknown>, TablesRelationalConfig>
type TransactionConfig = Parameters<Transaction['setTransaction']>[0]

declare module 'drizzle-orm/pg-core' {
  interface PgTransactionConfig {
    /** BEGIN deferred: the first statement opens an implicit block (see the top of transaction.ts). */
    deferBegin?: boolean
  }
}

/**
 * Replaces the Drizzle session's `transaction()` (which uses postgres.js `begin()`) with the
 * pipelined one. Not offered inside it: nested transactions (savepoints through Drizzle; a work
 * takes its own savepoints with plain statements) and relational queries (`tx.query`).
 */
export function pipelineTransactions(session: object, sql: postgres.Sql, announcer: EventAnnouncer): void {
  announcers.set(sql, announcer)
  const { dialect, options } = session as { dialect: SessionArguments[1]; options: SessionArguments[3] }
  const transaction = async <T>(work: (tx: Transaction) => Promise<T>, config?: TransactionConfig): Promise<T> => {
    const { deferBegin: asked, ...settings } = config ?? {}
    const deferBegin = asked === true && CAN_FLUSH
    const setting = Object.keys(settings).length > 0
    if (deferBegin && setting) throw new Error('A transaction whose BEGIN is deferred takes no other settings')
    const reserved = await sql.reserve()
    const state: TransactionState = {
      reserved,
      connection: undefined,
      lost: undefined,
      failure: undefined,
      commit: undefined,
      ended: false,
      events: [],
      announcer,
      implicit: deferBegin ? 'idle' : undefined,
      first: undefined,
      firstFailure: undefined,
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
    if (!deferBegin) sendBegin(state)
    const client = clientOf(state)
    states.set(client, state)
    // Drizzle types a transaction's session over postgres.js's TransactionSql, which it does not
    // declare as a Sql; the session only ever calls unsafe() on its client. Without the schema:
    // Drizzle would build a relational query builder per table for every transaction (a few
    // percent of a checkout's CPU), and no transaction uses `tx.query`.
    const session = new PostgresJsSession(client as postgres.Sql, dialect, undefined, options)
    const tx: Transaction = new PostgresJsTransaction(dialect, session as never, undefined)
    try {
      if (setting) await tx.setTransaction(settings)
      let result: T
      try {
        result = await work(tx)
      } catch (error) {
        noteFailure(state, error)
        if (state.commit) await state.commit.catch(() => {})
        else if (!state.lost) {
          // An implicit block still open is ended by BEGIN and ROLLBACK (ROLLBACK alone would end
          // it with a warning); one whose first statement failed has ended already.
          const open = state.implicit === undefined || (state.implicit === 'first' && (await endImplicit(state).then(() => true, () => false)))
          state.ended = true
          if (open) await reserved.unsafe('rollback').catch(() => {})
        }
        throw isAborted(error) && state.failure !== undefined ? state.failure : error
      }
      await (state.commit ?? commit(state))
      return result
    } finally {
      state.ended = true
      if (!state.lost) {
        if (state.connection) state.connection.onclose = null
        reserved.release()
      }
    }
  }
  ;(session as { transaction: unknown }).transaction = transaction
}
