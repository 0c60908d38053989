/**
 * The locales that have any translation (docs/translations.md), known to each API instance: a
 * read whose chain of locales names none of them runs the untranslated statement. Every browser
 * sends Accept-Language, and without this a shop with no translations paid for the translation
 * join on each of its reads (bench/README.md, translations).
 *
 * A translation written through this instance adds its locale at once; one written through
 * another is seen at the next refresh, every REFRESH_MS, which lists the locales again only when
 * the catalog revision moved (every translation insert moves it).
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { translatedLocalesSince } from '@commerce/db'

declare module 'fastify' {
  interface FastifyInstance {
    translatedLocales: TranslatedLocales
  }
}

export interface TranslatedLocales {
  /** The chain without the locales that have no translation, in the same order. */
  filter(chain: string[]): string[]
  /** A locale just given a translation through this instance. */
  add(locale: string): void
  /** Lists the locales again if the catalog revision moved since the last time. */
  refresh(): Promise<void>
}

const REFRESH_MS = 5_000

export default fp(
  async function translatedLocalesPlugin(app: FastifyInstance) {
    let known = new Set<string>()
    let seenRevision: string | undefined
    const locales: TranslatedLocales = {
      filter: (chain) => chain.filter((locale) => known.has(locale)),
      add: (locale) => void known.add(locale),
      async refresh() {
        const found = await translatedLocalesSince(app.sql, seenRevision)
        if (found.locales) known = new Set(found.locales)
        seenRevision = found.revision
      },
    }
    app.decorate('translatedLocales', locales)

    let timer: NodeJS.Timeout | undefined
    // Never fatal: until a refresh succeeds, reads show the original text (and the app builds its
    // OpenAPI document with no database at all).
    const refresh = () => locales.refresh().catch((error: unknown) => app.log.warn({ err: error }, 'could not list the translated locales'))
    const refreshLater = () => {
      timer = setTimeout(() => void refresh().finally(refreshLater), REFRESH_MS)
      timer.unref()
    }
    app.addHook('onReady', async () => {
      await refresh()
      refreshLater()
    })
    app.addHook('onClose', async () => clearTimeout(timer))
  },
  { name: 'translated-locales', dependencies: ['database'] },
)
