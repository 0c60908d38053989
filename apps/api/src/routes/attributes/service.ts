/**
 * Attribute definitions (docs/catalog.md, "Attributes") and the values products and variants hold
 * of them: every value written is checked against its definition; a definition's change that
 * would leave values it no longer allows is refused, naming how many; deleting one deletes its
 * values in the same transaction.
 */
import { and, asc, eq, inArray, sql } from 'drizzle-orm'
import {
  checkAttributeDefinition,
  checkAttributeValue,
  DomainError,
  type AttributeDefinition,
  type AttributeOwner,
  type AttributeRules,
  type AttributeValue,
  type CreateAttributeDefinition,
  type UpdateAttributeDefinition,
} from '@commerce/domain'
import { attributeDefinitions, isUniqueViolation, products, productVariants, type Database, type Executor } from '@commerce/db'
import { conflict, invalidField, notFound } from '../../errors.js'
import { key, keyset, listTable, type PageQuery } from '../../list-cursor.js'

type DefinitionRow = typeof attributeDefinitions.$inferSelect

/** By owner, then position, then id. */
const DEFINITIONS_KEYSET = keyset('attribute_definitions', 'asc', [key.text(sql`${attributeDefinitions.owner}::text`), key.integer(attributeDefinitions.position), key.uuid(attributeDefinitions.id)])

export function toAttributeDefinition(row: DefinitionRow): AttributeDefinition {
  return {
    id: row.id,
    key: row.key,
    owner: row.owner,
    name: row.name,
    description: row.description,
    type: row.type,
    unit: row.unit,
    choices: row.choices,
    validation: { min: row.rules.min ?? null, max: row.rules.max ?? null, pattern: row.rules.pattern ?? null, max_length: row.rules.maxLength ?? null },
    filterable: row.filterable,
    public: row.public,
    position: row.position,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

const rulesOf = (validation: CreateAttributeDefinition['validation'] | undefined, current: AttributeRules = {}): AttributeRules => ({
  min: validation?.min === undefined ? current.min : validation.min,
  max: validation?.max === undefined ? current.max : validation.max,
  pattern: validation?.pattern === undefined ? current.pattern : validation.pattern,
  maxLength: validation?.max_length === undefined ? current.maxLength : validation.max_length,
})

/** The table of an owner's values. */
const tableOf = (owner: AttributeOwner) => (owner === 'product' ? products : productVariants)

/** Where a value is kept: public definitions' in `attributes`, the others in `staff_attributes`. */
const columnOf = (definition: Pick<DefinitionRow, 'public'>) => (definition.public ? 'attributes' : 'staff_attributes')

export function createAttributeService(db: Database) {
  async function find(tx: Executor, id: string, lock = false): Promise<DefinitionRow> {
    const query = tx.select().from(attributeDefinitions).where(eq(attributeDefinitions.id, id))
    const [row] = lock ? await query.for('update') : await query
    if (!row) throw notFound('Attribute definition')
    return row
  }

  /**
   * How many products or variants hold a value of the definition that `allowed` refuses (the
   * values are read in the database and checked here, so the rule is the one writes obey).
   */
  async function valuesRefused(tx: Executor, definition: DefinitionRow, next: DefinitionRow): Promise<number> {
    const table = tableOf(definition.owner)
    const column = sql.raw(columnOf(definition))
    const rows = await tx
      .select({ value: sql<AttributeValue>`${column} -> ${definition.key}` })
      .from(table)
      .where(sql`${column} ? ${definition.key}`)
    let refused = 0
    for (const { value } of rows) {
      try {
        checkAttributeValue(next, value, 'value')
      } catch (error) {
        if (!(error instanceof DomainError)) throw error
        refused++
      }
    }
    return refused
  }

  return {
    async list(query: PageQuery & { owner?: AttributeOwner | undefined }) {
      const where = query.owner ? eq(attributeDefinitions.owner, query.owner) : undefined
      const { rows, meta } = await listTable(db, DEFINITIONS_KEYSET, attributeDefinitions, where, query)
      return { attributes: rows.map(toAttributeDefinition), meta }
    },

    async get(id: string) {
      return toAttributeDefinition(await find(db, id))
    },

    async create(body: CreateAttributeDefinition) {
      const rules = rulesOf(body.validation)
      checkAttributeDefinition({ type: body.type, choices: body.choices ?? [], rules })
      if (body.type === 'rich_text' && body.filterable) throw invalidField('filterable', "Field 'filterable' cannot be true for a rich_text attribute")
      try {
        const [row] = await db
          .insert(attributeDefinitions)
          .values({
            key: body.key,
            owner: body.owner ?? 'product',
            name: body.name,
            description: body.description ?? null,
            type: body.type,
            unit: body.unit ?? null,
            choices: body.choices ?? [],
            rules,
            filterable: body.filterable ?? false,
            public: body.public ?? true,
            position: body.position ?? 0,
          })
          .returning()
        return toAttributeDefinition(row!)
      } catch (error) {
        if (isUniqueViolation(error)) throw conflict(`A ${body.owner ?? 'product'} attribute with key '${body.key}' already exists`)
        throw error
      }
    },

    /**
     * Changes a definition; values it would no longer allow are 409 naming how many (change them
     * first). Making it staff-only (or public) moves its values to the other column.
     */
    update(id: string, body: UpdateAttributeDefinition) {
      return db.transaction(async (tx) => {
        const current = await find(tx, id, true)
        const next: DefinitionRow = {
          ...current,
          name: body.name ?? current.name,
          description: body.description === undefined ? current.description : body.description,
          unit: body.unit === undefined ? current.unit : body.unit,
          choices: body.choices ?? current.choices,
          rules: rulesOf(body.validation, current.rules),
          filterable: body.filterable ?? current.filterable,
          public: body.public ?? current.public,
          position: body.position ?? current.position,
        }
        checkAttributeDefinition(next)
        if (next.type === 'rich_text' && next.filterable) throw invalidField('filterable', "Field 'filterable' cannot be true for a rich_text attribute")
        const refused = await valuesRefused(tx, current, next)
        if (refused > 0) {
          throw conflict(`${refused} ${current.owner}(s) hold a value of '${current.key}' the new definition refuses: change those values first`)
        }
        if (next.public !== current.public) {
          const from = sql.raw(columnOf(current))
          const to = sql.raw(columnOf(next))
          await tx
            .update(tableOf(current.owner))
            .set({ [next.public ? 'attributes' : 'staffAttributes']: sql`${to} || jsonb_build_object(${current.key}::text, ${from} -> ${current.key})`, [current.public ? 'attributes' : 'staffAttributes']: sql`${from} - ${current.key}::text` })
            .where(sql`${from} ? ${current.key}`)
        }
        const [row] = await tx
          .update(attributeDefinitions)
          .set({ ...next, id: undefined, key: undefined, owner: undefined, type: undefined, createdAt: undefined, updatedAt: new Date() })
          .where(eq(attributeDefinitions.id, id))
          .returning()
        return toAttributeDefinition(row!)
      })
    },

    /** Deletes a definition and, in the same transaction, every value of it. */
    remove(id: string) {
      return db.transaction(async (tx) => {
        const current = await find(tx, id, true)
        const column = sql.raw(columnOf(current))
        await tx
          .update(tableOf(current.owner))
          .set({ [current.public ? 'attributes' : 'staffAttributes']: sql`${column} - ${current.key}::text` })
          .where(sql`${column} ? ${current.key}`)
        await tx.delete(attributeDefinitions).where(eq(attributeDefinitions.id, id))
      })
    },
  }
}

/**
 * The `attributes` and `staff_attributes` of a product or variant after a write of `sent` (keys
 * sent are set, null removes one, the others stay), each value checked against its definition:
 * 400 naming `<field>.<key>` for an unknown key or a value the definition refuses, and for a
 * product reference that names no product.
 */
export async function writeAttributes(
  tx: Executor,
  owner: AttributeOwner,
  current: { attributes: Record<string, AttributeValue>; staffAttributes: Record<string, AttributeValue> },
  sent: Record<string, unknown> | undefined,
  field = 'attributes',
): Promise<{ attributes: Record<string, AttributeValue>; staffAttributes: Record<string, AttributeValue> } | undefined> {
  if (sent === undefined) return undefined
  const keys = Object.keys(sent)
  if (keys.length === 0) return undefined
  const definitions = await tx
    .select()
    .from(attributeDefinitions)
    .where(and(eq(attributeDefinitions.owner, owner), inArray(attributeDefinitions.key, keys)))
    .orderBy(asc(attributeDefinitions.key))
  const byKey = new Map(definitions.map((definition) => [definition.key, definition]))
  const attributes = { ...current.attributes }
  const staffAttributes = { ...current.staffAttributes }
  const references: { key: string; id: string }[] = []
  for (const [key, value] of Object.entries(sent)) {
    const definition = byKey.get(key)
    if (!definition) throw invalidField(`${field}.${key}`, `Field '${field}.${key}' names no ${owner} attribute (GET /attributes lists them)`)
    const kept = definition.public ? attributes : staffAttributes
    if (value === null) {
      delete kept[key]
      continue
    }
    const checked = checkAttributeValue(definition, value, `${field}.${key}`)
    if (definition.type === 'product_reference') references.push({ key, id: checked as string })
    kept[key] = checked
  }
  if (references.length > 0) {
    const found = await tx.select({ id: products.id }).from(products).where(inArray(products.id, references.map((reference) => reference.id)))
    const known = new Set(found.map((row) => row.id))
    const missing = references.find((reference) => !known.has(reference.id))
    if (missing) throw invalidField(`${field}.${missing.key}`, `Field '${field}.${missing.key}' names no product: ${missing.id}`)
  }
  return { attributes, staffAttributes }
}
