/** PostgreSQL error codes, whether postgres.js raised them directly or Drizzle wrapped them. */
export function pgErrorCode(error: unknown): string | undefined {
  for (let current = error; current instanceof Error; current = current.cause) {
    const code = (current as { code?: unknown }).code
    if (typeof code === 'string') return code
  }
  return undefined
}

export function isUniqueViolation(error: unknown): boolean {
  return pgErrorCode(error) === '23505'
}

export function isForeignKeyViolation(error: unknown): boolean {
  return pgErrorCode(error) === '23503'
}

/** The constraint a violation names (postgres.js `constraint_name`), to tell one unique index from another. */
export function pgConstraintOf(error: unknown): string | undefined {
  for (let current = error; current instanceof Error; current = current.cause) {
    const name = (current as { constraint_name?: unknown }).constraint_name
    if (typeof name === 'string') return name
  }
  return undefined
}
