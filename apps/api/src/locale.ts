/**
 * Which locales a read shows its text in (docs/translations.md): `?locale=` when given, else the
 * Accept-Language header, as a chain tried in order (`fr-CA`, `fr`); and the headers saying so.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { acceptedLanguages, canonicalLocale, localeChain } from '@commerce/domain'
import { invalidField } from './errors.js'

/** A tag from a path or `?locale=` in canonical form, or a 400 naming `field`. */
export function requireLocale(tag: string, field = 'locale'): string {
  const canonical = canonicalLocale(tag)
  if (!canonical) throw invalidField(field, `Field '${field}' must be a BCP 47 language tag such as fr or fr-CA`)
  return canonical
}

/**
 * The chain of locales the request asks for that have any translation ([]: the original text,
 * read by the untranslated statement).
 */
export function requestedLocales(request: FastifyRequest): string[] {
  const tag = (request.query as { locale?: string }).locale
  const header = request.headers['accept-language']
  const wanted = tag !== undefined ? [requireLocale(tag)] : header ? acceptedLanguages(header) : []
  return wanted.length === 0 ? [] : request.server.translatedLocales.filter(localeChain(wanted))
}

/**
 * `Vary: Accept-Language` on every translatable read (a cache must not serve one language's
 * answer to another), and `Content-Language` naming the locales of the translations shown.
 */
export function describeLanguage(reply: FastifyReply, shown: readonly (string | null | undefined)[]): void {
  const vary = reply.getHeader('vary')
  reply.header('vary', vary ? `${String(vary)}, Accept-Language` : 'Accept-Language')
  const locales = [...new Set(shown.filter((locale): locale is string => typeof locale === 'string'))]
  if (locales.length > 0) reply.header('content-language', locales.join(', '))
}
