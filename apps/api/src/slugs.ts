/** Slugs generated from a title or name, made unique within their table by a -2, -3, … suffix. */
import { eq, like, or } from 'drizzle-orm'
import type { PgColumn } from 'drizzle-orm/pg-core'
import { SLUG_MAX_LENGTH, slugify } from '@commerce/domain'
import type { Executor } from '@commerce/db'

// Room for the suffix, so a generated slug never exceeds the length a sent slug may have.
const SUFFIX_ROOM = 8

export async function generateUniqueSlug(tx: Executor, column: PgColumn, text: string, fallback: string): Promise<string> {
  const base = slugify(text, fallback).slice(0, SLUG_MAX_LENGTH - SUFFIX_ROOM).replace(/-+$/, '')
  const rows = await tx
    .select({ slug: column })
    .from(column.table)
    .where(or(eq(column, base), like(column, `${base}-%`)))
  const taken = new Set(rows.map((row) => row.slug as string))
  if (!taken.has(base)) return base
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`
}
