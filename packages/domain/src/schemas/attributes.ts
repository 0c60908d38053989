/** Custom attribute definitions (docs/catalog.md, "Attributes"). */
import { Type, type Static } from 'typebox'
import { ATTRIBUTE_OWNERS, ATTRIBUTE_TYPES } from '../constants.js'
import { Nullable, PageOrCursorMeta, PaginationQuery, Timestamp, Uuid } from './common.js'

export const AttributeKey = Type.String({
  pattern: '^[a-z][a-z0-9_]{0,63}$',
  maxLength: 64,
  description: 'Lower case letters, digits and _, starting with a letter: the name in `attributes` and in filters (`attr[key]`)',
})
const Bound = Nullable(Type.Union([Type.Number(), Type.String({ maxLength: 10 })], { description: 'A number (integer, decimal) or a date YYYY-MM-DD' }))

const Validation = Type.Object(
  {
    min: Type.Optional(Bound),
    max: Type.Optional(Bound),
    pattern: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 200, description: 'text: a regular expression the whole value must match' }))),
    max_length: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 20000, description: 'text, rich_text: the most characters' }))),
  },
  { additionalProperties: false, title: 'AttributeValidation', description: 'What a value must be beyond its type' },
)

export const AttributeDefinition = Type.Object(
  {
    id: Uuid,
    key: Type.String(),
    owner: Type.Enum(ATTRIBUTE_OWNERS, { description: 'Products or variants' }),
    name: Type.String(),
    description: Nullable(Type.String()),
    type: Type.Enum(ATTRIBUTE_TYPES),
    unit: Nullable(Type.String({ description: 'integer, decimal: the unit values are in (g, cm, mAh)' })),
    choices: Type.Array(Type.String(), { description: 'select, multi_select: the values allowed, in display order' }),
    validation: Type.Object({
      min: Nullable(Type.Union([Type.Number(), Type.String()])),
      max: Nullable(Type.Union([Type.Number(), Type.String()])),
      pattern: Nullable(Type.String()),
      max_length: Nullable(Type.Integer()),
    }),
    filterable: Type.Boolean({ description: 'Listings filter on it (`attr[key]=`) and facets count it' }),
    public: Type.Boolean({ description: 'Shown to everyone; false: staff only (admins, API keys)' }),
    position: Type.Integer({ description: 'Display order among the definitions of its owner' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'AttributeDefinition', description: 'What a key of `attributes` on products or variants holds' },
)
export type AttributeDefinition = Static<typeof AttributeDefinition>

const definitionFields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
  unit: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 20 }))),
  choices: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 500 })),
  validation: Type.Optional(Validation),
  filterable: Type.Optional(Type.Boolean()),
  public: Type.Optional(Type.Boolean()),
  position: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000 })),
}

export const CreateAttributeDefinition = Type.Object(
  {
    key: AttributeKey,
    owner: Type.Optional(Type.Enum(ATTRIBUTE_OWNERS, { description: 'Default product' })),
    type: Type.Enum(ATTRIBUTE_TYPES),
    ...definitionFields,
  },
  { additionalProperties: false, title: 'CreateAttributeDefinitionRequest' },
)
export type CreateAttributeDefinition = Static<typeof CreateAttributeDefinition>
export const UpdateAttributeDefinition = Type.Partial(Type.Object(definitionFields), {
  additionalProperties: false,
  minProperties: 1,
  title: 'UpdateAttributeDefinitionRequest',
  description: 'Key, owner and type stay: make a new definition to change them',
})
export type UpdateAttributeDefinition = Static<typeof UpdateAttributeDefinition>

export const AttributeDefinitionList = Type.Object(
  { attributes: Type.Array(AttributeDefinition), meta: PageOrCursorMeta },
  { title: 'AttributeDefinitionList', description: 'Attribute definitions by owner and position' },
)
export const ListAttributeDefinitionsQuery = Type.Object({
  ...PaginationQuery.properties,
  owner: Type.Optional(Type.Enum(ATTRIBUTE_OWNERS)),
})

/** A value of `attributes` as written: null removes it. */
export const AttributeValueInput = Nullable(
  Type.Union([Type.String({ maxLength: 20000 }), Type.Number(), Type.Boolean(), Type.Array(Type.String({ maxLength: 200 }), { maxItems: 500 })]),
)
export const AttributesInput = Type.Record(AttributeKey, AttributeValueInput, {
  maxProperties: 100,
  description: 'Values by attribute key, each checked against its definition (400 naming `attributes.<key>`); null removes one; keys not sent keep theirs',
})
export const AttributesOutput = Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Array(Type.String())]), {
  description: 'Values by attribute key (GET /attributes defines them); staff-only ones show to staff only',
})
