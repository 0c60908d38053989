-- Whether a product's listing row matches one rule of an automatic collection; `price` is the
-- product's price in the rule's currency (null: not sold there). No subquery and only immutable
-- functions (jsonb_build_object is stable), so PostgreSQL inlines it into the statements that decide
-- membership (bench/README.md, Seeding).
CREATE OR REPLACE FUNCTION "collection_rule_matches"(l product_listing, r collection_rules, price bigint) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE r.field
    WHEN 'tag' THEN (('tag:' || r.value) = ANY(l.terms)) = (r.operator = 'equals')
    WHEN 'type' THEN (('type:' || r.value) = ANY(l.terms)) = (r.operator = 'equals')
    WHEN 'vendor' THEN (('vendor:' || r.value) = ANY(l.terms)) = (r.operator = 'equals')
    WHEN 'option' THEN (('opt:' || r.name || ':' || r.value) = ANY(l.terms)) = (r.operator = 'equals')
    WHEN 'title' THEN CASE r.operator WHEN 'contains' THEN strpos(l.title_key, r.value) > 0 WHEN 'equals' THEN l.title_key = r.value ELSE l.title_key <> r.value END
    WHEN 'stock' THEN l.available = (r.operator = 'in_stock')
    WHEN 'on_sale' THEN l.on_sale = (r.operator = 'is_true')
    WHEN 'price' THEN coalesce(CASE r.operator WHEN 'greater_than' THEN price > r.value::bigint ELSE price < r.value::bigint END, false)
    WHEN 'attribute' THEN CASE r.operator
      WHEN 'equals' THEN ('attr:' || r.name || ':' || r.value) = ANY(l.terms)
      WHEN 'not_equals' THEN NOT (('attr:' || r.name || ':' || r.value) = ANY(l.terms))
      WHEN 'greater_than' THEN coalesce(jsonb_path_exists(l.numbers -> r.name, '$[*] ? (@ > $v)', ('{"v":' || r.value::numeric::text || '}')::jsonb), false)
      ELSE coalesce(jsonb_path_exists(l.numbers -> r.name, '$[*] ? (@ < $v)', ('{"v":' || r.value::numeric::text || '}')::jsonb), false) END
    ELSE false END
$$;
--> statement-breakpoint
-- A bulk refresh (a seed, an import, an attribute definition's change) is costed high enough for
-- JIT compilation, which took half of its time (bench/README.md, Seeding); a trigger's refresh of a
-- few products is never costed that high.
ALTER FUNCTION "refresh_product_listing"(uuid[]) SET jit = off;--> statement-breakpoint
ALTER FUNCTION "refresh_collection_membership"(uuid[], uuid) SET jit = off;
