/**
 * Turns free text into a PostgreSQL tsquery of word prefixes ("red sho" -> "red:* & sho:*").
 * Only letters and digits pass, so user text can never inject tsquery syntax.
 */
const MAX_SEARCH_WORDS = 8

export function toPrefixTsQuery(text: string): string | null {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu)
  if (!words) return null
  return [...new Set(words)].slice(0, MAX_SEARCH_WORDS).map((word) => `${word}:*`).join(' & ')
}
