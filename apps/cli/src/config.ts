/**
 * The CLI's configuration from the environment: the database commands' here (the shared
 * variables of @commerce/runtime), the API commands' base URL and token through their flags' env
 * fallbacks. loadConfig loads @commerce/runtime (TypeBox and @commerce/domain, slow to load) when a
 * database command calls it: every other command starts without them.
 */
import type { EnvironmentSource } from '@commerce/runtime/config'

export interface Config {
  /** Unset: the embedded PostgreSQL in `dataDir`, found running or started for the command. */
  databaseUrl: string | undefined
  /** COMMERCE_DATA_DIR, as the API and the worker read it; unset: the workspace's `.data/`. */
  dataDir: string | undefined
  /** scrypt N for new password hashes (SCRYPT_COST; unset: the domain's default); tests lower it for speed. */
  scryptCost: number | undefined
}

/** Reads the configuration, naming every bad variable in one error. Empty values count as unset. */
export async function loadConfig(env: EnvironmentSource = process.env): Promise<Config> {
  const { DATABASE_LOCATION, PASSWORD_HASHING, readEnvironment, refuseProblems } = await import('@commerce/runtime/config')
  // Every variable the CLI's database commands read.
  const CLI_VARIABLES = { ...DATABASE_LOCATION, ...PASSWORD_HASHING }
  const { values, problems } = readEnvironment(CLI_VARIABLES, env)
  refuseProblems(problems)
  return { databaseUrl: values.DATABASE_URL, dataDir: values.COMMERCE_DATA_DIR, scryptCost: values.SCRYPT_COST }
}

/** COMMERCE_PASSWORD, for `commerce login` in scripts: a password is never a flag (ps shows flags). Kept as typed, spaces and all. */
export function loginPassword(env: EnvironmentSource = process.env): string | undefined {
  return env.COMMERCE_PASSWORD === '' ? undefined : env.COMMERCE_PASSWORD
}
