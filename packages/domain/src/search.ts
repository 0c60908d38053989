/**
 * A search as sent to the database, which parses it into word prefixes with the parser that wrote
 * the products' words (@commerce/db, prefix_tsquery: "red sho" finds "red shoes"); null when it has
 * no letter or digit, so it can match nothing. The text is a parameter: it can never be tsquery syntax.
 */
export function searchText(text: string): string | null {
  const trimmed = text.trim()
  return /[\p{L}\p{N}]/u.test(trimmed) ? trimmed.toLowerCase() : null
}
