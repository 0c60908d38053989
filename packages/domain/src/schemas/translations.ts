/** Translated catalog content (docs/translations.md): one translation per resource and locale. */
import { Type, type Static } from 'typebox'
import { LOCALE_MAX_LENGTH } from '../locales.js'
import { Nullable, Timestamp, Uuid } from './common.js'

/** A BCP 47 tag as a request names it; the API puts it in canonical form (`fr-ca` → `fr-CA`). */
const localeTag = (description: string) =>
  Type.String({ minLength: 2, maxLength: LOCALE_MAX_LENGTH, pattern: '^[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*$', description, examples: ['fr-CA'] })
const LocaleTag = localeTag('A BCP 47 language tag (fr, fr-CA, zh-Hant)')

export const LocaleQuery = Type.Object({
  locale: Type.Optional(
    localeTag(
      'Show translated titles, names and descriptions in this BCP 47 locale, falling back to shorter tags (fr-CA, then fr) and then ' +
        'to the original text, field by field. Without it, the Accept-Language header chooses (q-values honoured).',
    ),
  ),
})
export type LocaleQuery = Static<typeof LocaleQuery>

const Title = Type.String({ minLength: 1, maxLength: 500 })
const Description = Type.String({ maxLength: 20000 })
const translationTimes = { created_at: Timestamp, updated_at: Timestamp }

export const ProductTranslationParams = Type.Object({ id: Uuid, locale: LocaleTag })
export const VariantTranslationParams = Type.Object({ id: Uuid, variant_id: Uuid, locale: LocaleTag })
export const CategoryTranslationParams = ProductTranslationParams

const TranslatedTexts = (description: string) => Nullable(Type.Record(Type.String({ maxLength: 64 }), Type.String({ minLength: 1, maxLength: 20000 }), { maxProperties: 500, description }))
const ATTRIBUTE_TEXTS = 'Values of text and rich_text attributes by key (the others are not text to translate)'
const OPTION_TEXTS = "Option names and values by their id (the product's `options[].id` and `options[].values[].id`)"
export const ProductTranslation = Type.Object(
  {
    locale: Type.String(),
    title: Nullable(Type.String()),
    description: Nullable(Type.String()),
    attributes: TranslatedTexts(ATTRIBUTE_TEXTS),
    options: TranslatedTexts(OPTION_TEXTS),
    ...translationTimes,
  },
  { title: 'ProductTranslation', description: "A product's title, description, text attributes and option names and values in one locale; what is null or left out shows the original" },
)
export type ProductTranslation = Static<typeof ProductTranslation>
export const PutProductTranslation = Type.Object(
  {
    title: Type.Optional(Nullable(Title)),
    description: Type.Optional(Nullable(Description)),
    attributes: Type.Optional(TranslatedTexts(ATTRIBUTE_TEXTS)),
    options: Type.Optional(TranslatedTexts(OPTION_TEXTS)),
  },
  { additionalProperties: false, minProperties: 1, title: 'PutProductTranslationRequest', description: 'The whole translation: a field left out or null is not translated' },
)
export type PutProductTranslation = Static<typeof PutProductTranslation>

export const VariantTranslation = Type.Object(
  { locale: Type.String(), title: Type.String(), ...translationTimes },
  { title: 'VariantTranslation', description: "A variant's title in one locale" },
)
export type VariantTranslation = Static<typeof VariantTranslation>
export const PutVariantTranslation = Type.Object(
  { title: Title },
  { additionalProperties: false, title: 'PutVariantTranslationRequest' },
)
export type PutVariantTranslation = Static<typeof PutVariantTranslation>

export const CategoryTranslation = Type.Object(
  { locale: Type.String(), name: Nullable(Type.String()), description: Nullable(Type.String()), ...translationTimes },
  { title: 'CategoryTranslation', description: "A category's name and description in one locale; null fields show the original" },
)
export type CategoryTranslation = Static<typeof CategoryTranslation>
export const PutCategoryTranslation = Type.Object(
  { name: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 200 }))), description: Type.Optional(Nullable(Description)) },
  { additionalProperties: false, minProperties: 1, title: 'PutCategoryTranslationRequest', description: 'The whole translation: a field left out or null is not translated' },
)
export type PutCategoryTranslation = Static<typeof PutCategoryTranslation>

export const ProductTranslationList = Type.Object(
  { translations: Type.Array(ProductTranslation) },
  { title: 'ProductTranslationList', description: "A product's translations by locale" },
)
export const VariantTranslationList = Type.Object(
  { translations: Type.Array(VariantTranslation) },
  { title: 'VariantTranslationList', description: "A variant's translations by locale" },
)
export const CategoryTranslationList = Type.Object(
  { translations: Type.Array(CategoryTranslation) },
  { title: 'CategoryTranslationList', description: "A category's translations by locale" },
)
