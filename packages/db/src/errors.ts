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
