/**
 * Locales of translated content (docs/translations.md): BCP 47 tags in their canonical form
 * (`fr-ca` → `fr-CA`), and the order in which a request's locales are tried, RFC 4647 lookup
 * style: each wanted tag, then its shorter forms (`fr-CA` → `fr`), then the next tag.
 */

/** The longest tag taken: a language, script, region and a variant or two fit easily. */
export const LOCALE_MAX_LENGTH = 35

/** Locales tried per request at most: an Accept-Language header can name many. */
export const MAX_LOCALE_CHAIN = 8

/** The longest Accept-Language header read; a longer one is read up to here. */
const ACCEPT_LANGUAGE_MAX_LENGTH = 512

/** The tag in canonical form, or undefined when it is not a well-formed BCP 47 language tag. */
export function canonicalLocale(tag: string): string | undefined {
  if (tag.length === 0 || tag.length > LOCALE_MAX_LENGTH || !/^[A-Za-z0-9-]+$/.test(tag)) return undefined
  try {
    const [canonical] = Intl.getCanonicalLocales(tag)
    // `und` (undetermined) names no language to translate into.
    return canonical && !canonical.startsWith('und') ? canonical : undefined
  } catch {
    return undefined
  }
}

/** The tag and its shorter forms down to the language, dropping a lone single-letter subtag (`zh-Hant-x-a` → `zh-Hant` → `zh`). */
function truncations(tag: string): string[] {
  const subtags = tag.split('-')
  const found: string[] = []
  for (let length = subtags.length; length > 0; length--) {
    if (subtags[length - 1]!.length === 1) continue
    found.push(subtags.slice(0, length).join('-'))
  }
  return found
}

/** The locales to try, in order, for tags in order of preference (each already canonical). */
export function localeChain(tags: readonly string[]): string[] {
  const chain: string[] = []
  for (const tag of tags) {
    for (const candidate of truncations(tag)) {
      if (!chain.includes(candidate)) chain.push(candidate)
      if (chain.length === MAX_LOCALE_CHAIN) return chain
    }
  }
  return chain
}

/**
 * The languages of an Accept-Language header by preference (q-value, then order), canonical;
 * `*`, `q=0` and malformed entries are left out, as a header is a hint and never an error.
 */
export function acceptedLanguages(header: string): string[] {
  const ranked: { tag: string; q: number; index: number }[] = []
  header
    .slice(0, ACCEPT_LANGUAGE_MAX_LENGTH)
    .split(',')
    .forEach((entry, index) => {
      const [range = '', ...parameters] = entry.trim().split(';')
      let q = 1
      for (const parameter of parameters) {
        const match = /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/i.exec(parameter)
        if (match) q = Number(match[1])
        else return
      }
      const tag = range.trim() === '*' ? undefined : canonicalLocale(range.trim())
      if (tag && q > 0 && q <= 1) ranked.push({ tag, q, index })
    })
  ranked.sort((a, b) => b.q - a.q || a.index - b.index)
  return ranked.map((entry) => entry.tag)
}
