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
      filter: (chain) => (known.size === 0 ? [] : chain.filter((locale) => known.has(locale))),
      add: (locale) => void known.add(locale),
      async refresh() {
        // The revision first: a translation committed after it moves it again, for the next refresh.
        const [current] = await app.sql<{ revision: string }[]>`select revision::text from catalog_revision`
        const revision = current!.revision
        if (revision === seenRevision) return
        const rows = await app.sql<{ locale: string }[]>`
          select locale from product_translations union select locale from variant_translations union select locale from category_translations`
        known = new Set(rows.map((row) => row.locale))
        seenRevision = revision
      },
    }
    app.decorate('translatedLocales', locales)

    let timer: NodeJS.Timeout | undefined
    const refreshLater = () => {
      timer = setTimeout(() => {
        locales
          .refresh()
          .catch((error: unknown) => app.log.warn({ err: error }, 'could not list the translated locales'))
          .finally(refreshLater)
      }, REFRESH_MS)
      timer.unref()
    }
    app.addHook('onReady', async () => {
      await locales.refresh()
      refreshLater()
    })
    app.addHook('onClose', async () => clearTimeout(timer))
  },
  { name: 'translated-locales', dependencies: ['database'] },
)
