/**
 * Automatic collections' membership (docs/catalog.md, "Collections"): decided by the database
 * (collection_rule_matches, refresh_collection_membership: migration 0038), here asked to decide
 * one collection again, or to say what rules would match without saving them.
 */
import { sqlOf, type Executor } from '../client.js'
import type { SqlClient } from '../transaction.js'

/** A rule as collection_rules stores it. */
export interface StoredCollectionRule {
  position: number
  field: string
  operator: string
  name: string | null
  value: string | null
  currency: string | null
}

/** Decides again which products an automatic collection holds (after its rules changed), in the caller's transaction. */
export async function refreshCollection(tx: Executor, collectionId: string): Promise<void> {
  await sqlOf(tx).unsafe('select refresh_collection_membership(null, $1::uuid)', [collectionId], { prepare: true })
}

// $1 the rules (JSON array of StoredCollectionRule), $2 true: all must match, false: any.
const MATCHING = `select l.product_id from product_listing l, lateral (
    select case when $2::boolean then bool_and(collection_rule_matches(l, r, lp.amount_minor)) else bool_or(collection_rule_matches(l, r, lp.amount_minor)) end as matches
    from jsonb_populate_recordset(null::collection_rules, $1::jsonb) r
    left join product_listing_prices lp on lp.product_id = l.product_id and lp.currency = r.currency) m where m.matches`
const PREVIEW = `with matching as (${MATCHING})
select (select count(*)::int from matching) as count,
  coalesce((select json_agg(json_build_object('id', p.id, 'title', p.title, 'slug', p.slug) order by p.id desc)
    from (select id, title, slug from products where id in (select product_id from matching) order by id desc limit 20) p), '[]') as products`

/** What rules would match now: how many products and the 20 newest. */
export async function previewCollectionRules(client: SqlClient, rules: readonly StoredCollectionRule[], all: boolean): Promise<{ count: number; products: { id: string; title: string; slug: string }[] }> {
  const [row] = await client.unsafe<{ count: number; products: { id: string; title: string; slug: string }[] }[]>(PREVIEW, [JSON.stringify(rules), all], { prepare: true })
  return row!
}
