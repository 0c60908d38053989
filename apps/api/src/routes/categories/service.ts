import { eq, getTableColumns, sql } from 'drizzle-orm'
import { type Category, type CreateCategory, type UpdateCategory } from '@commerce/domain'
import { categories, categoryTranslationLocale, isUniqueViolation, translatedCategoryField, type Database, type Executor } from '@commerce/db'
import { conflict, invalidField, notFound } from '../../errors.js'
import { inWindow, key, keyset, readList, type PageQuery } from '../../list-cursor.js'
import { generateUniqueSlug } from '../../slugs.js'

type CategoryRow = typeof categories.$inferSelect

function toCategory(row: CategoryRow): Category {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    description: row.description,
    parent_id: row.parentId,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

/** A category's columns with its name and description along the chain `locales` (an empty chain: the original). */
const localizedColumns = {
  ...getTableColumns(categories),
  name: sql<string>`${translatedCategoryField(categories.id, 'name', categories.name)}`,
  description: sql<string | null>`${translatedCategoryField(categories.id, 'description', categories.description)}`,
  translationLocale: categoryTranslationLocale(categories.id),
}

/**
 * In the order the name shows, in the locale asked for: lower() for the same case-insensitive
 * order whatever the server's collation (C sorts 'a' after 'Z'). A translated name has no index;
 * the categories are few.
 */
const CATEGORIES_KEYSET = keyset('categories', 'asc', [key.text(sql`lower(${localizedColumns.name})`), key.text(localizedColumns.name), key.uuid(categories.id)])

export function createCategoryService(db: Database) {
  const detailStatement = db.select(localizedColumns).from(categories).where(eq(categories.id, sql.placeholder('id'))).prepare('category_detail')

  /** A parent must exist and must not be the category itself or one of its descendants. */
  async function checkParent(tx: Executor, parentId: string, selfId?: string) {
    for (let id: string | null = parentId; id !== null; ) {
      if (id === selfId) throw invalidField('parent_id', "Field 'parent_id' would make the category its own ancestor")
      const [row]: { parentId: string | null }[] = await tx
        .select({ parentId: categories.parentId })
        .from(categories)
        .where(eq(categories.id, id))
      if (!row) throw invalidField('parent_id', `Field 'parent_id' names an unknown category: ${id}`)
      id = row.parentId
    }
  }

  async function write<T>(work: (tx: Executor) => Promise<T>): Promise<T> {
    try {
      return await db.transaction(work)
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict('A category with this slug already exists')
      throw error
    }
  }

  return {
    /** A page by name, names and descriptions along the chain `locales`, with the locales of the translations shown. */
    async list(query: PageQuery, locales: string[]) {
      const select = () => db.select({ ...localizedColumns, cursorKey: CATEGORIES_KEYSET.cursorKey }).from(categories).$dynamic()
      const { rows, meta } = await readList(
        CATEGORIES_KEYSET,
        query,
        (window) => inWindow(select(), CATEGORIES_KEYSET, window).execute({ locales }),
        () => db.$count(categories),
      )
      return {
        list: { categories: rows.map(toCategory), meta },
        shownLocales: rows.map((row) => row.translationLocale),
      }
    },

    async get(id: string, locales: string[]): Promise<{ category: Category; shownLocale: string | null }> {
      const [row] = await detailStatement.execute({ id, locales })
      if (!row) throw notFound('Category')
      return { category: toCategory(row), shownLocale: row.translationLocale }
    },

    create(body: CreateCategory): Promise<Category> {
      return write(async (tx) => {
        if (body.parent_id) await checkParent(tx, body.parent_id)
        const [row] = await tx
          .insert(categories)
          .values({
            name: body.name,
            slug: body.slug ?? (await generateUniqueSlug(tx, categories.slug, body.name, 'category')),
            description: body.description ?? null,
            parentId: body.parent_id ?? null,
          })
          .returning()
        return toCategory(row!)
      })
    },

    update(id: string, body: UpdateCategory): Promise<Category> {
      return write(async (tx) => {
        if (body.parent_id) await checkParent(tx, body.parent_id, id)
        const [row] = await tx
          .update(categories)
          .set({
            name: body.name,
            slug: body.slug,
            description: body.description,
            parentId: body.parent_id,
            updatedAt: new Date(),
          })
          .where(eq(categories.id, id))
          .returning()
        if (!row) throw notFound('Category')
        return toCategory(row)
      })
    },

    async remove(id: string): Promise<void> {
      const deleted = await db.delete(categories).where(eq(categories.id, id)).returning({ id: categories.id })
      if (deleted.length === 0) throw notFound('Category')
    },
  }
}
