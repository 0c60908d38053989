/**
 * The CLI's configuration from the environment: the database commands' here, the API commands'
 * base URL and token through their flags' env fallbacks. No imports: every command loads this.
 */

export interface Config {
  /** Unset: the embedded PostgreSQL in `dataDir`, found running or started for the command. */
  databaseUrl: string | undefined
  /** COMMERCE_DATA_DIR, as the API and the worker read it; unset: the workspace's `.data/`. */
  dataDir: string | undefined
  /** scrypt N for new password hashes (SCRYPT_COST; unset: the domain's default); tests lower it for speed. */
  scryptCost: number | undefined
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError'
}

const MAX_SCRYPT_COST = 2 ** 20

/** Reads the configuration, naming every bad variable in one error. Empty values count as unset. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = []
  const text = (name: string) => {
    const value = env[name]?.trim()
    return value === '' ? undefined : value
  }

  const databaseUrl = text('DATABASE_URL')
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    // Not echoed: a URL may carry a password.
    problems.push('DATABASE_URL must be a postgres:// or postgresql:// URL')
  }

  let scryptCost: number | undefined
  const cost = text('SCRYPT_COST')
  if (cost !== undefined) {
    const parsed = Number(cost)
    // scrypt's N must be a power of two greater than 1.
    if (!/^\d+$/.test(cost) || parsed < 2 || parsed > MAX_SCRYPT_COST || (parsed & (parsed - 1)) !== 0) {
      problems.push(`SCRYPT_COST must be a power of two from 2 to ${MAX_SCRYPT_COST} (got '${cost}')`)
    } else {
      scryptCost = parsed
    }
  }

  if (problems.length > 0) throw new ConfigError(`Invalid environment: ${problems.join('; ')}`)
  return { databaseUrl, dataDir: text('COMMERCE_DATA_DIR'), scryptCost }
}

/** COMMERCE_PASSWORD, for `commerce login` in scripts: a password is never a flag (ps shows flags). */
export function loginPassword(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env.COMMERCE_PASSWORD === '' ? undefined : env.COMMERCE_PASSWORD
}
