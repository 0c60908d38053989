CREATE TYPE "public"."collection_kind" AS ENUM('manual', 'automatic');--> statement-breakpoint
CREATE TYPE "public"."collection_match" AS ENUM('all', 'any');--> statement-breakpoint
CREATE TYPE "public"."collection_sort" AS ENUM('manual', 'best_selling', 'price_asc', 'price_desc', 'newest', 'title');--> statement-breakpoint
CREATE TABLE "collection_products" (
	"collection_id" uuid NOT NULL,
	"product_id" uuid NOT NULL,
	"position" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "collection_products_pkey" PRIMARY KEY("collection_id","product_id")
);
--> statement-breakpoint
CREATE TABLE "collection_rules" (
	"collection_id" uuid NOT NULL,
	"position" integer NOT NULL,
	"field" text NOT NULL,
	"operator" text NOT NULL,
	"name" text,
	"value" text,
	"currency" text,
	CONSTRAINT "collection_rules_pkey" PRIMARY KEY("collection_id","position")
);
--> statement-breakpoint
CREATE TABLE "collection_translations" (
	"collection_id" uuid NOT NULL,
	"locale" text NOT NULL,
	"title" text,
	"description" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "collection_translations_pkey" PRIMARY KEY("collection_id","locale")
);
--> statement-breakpoint
CREATE TABLE "collections" (
	"id" uuid PRIMARY KEY NOT NULL,
	"title" text NOT NULL,
	"slug" text NOT NULL,
	"description" text,
	"image_url" text,
	"kind" "collection_kind" NOT NULL,
	"match" "collection_match" DEFAULT 'all' NOT NULL,
	"sort" "collection_sort" DEFAULT 'manual' NOT NULL,
	"published" boolean DEFAULT true NOT NULL,
	"rules" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "facet_labels" (
	"term" text PRIMARY KEY NOT NULL,
	"label" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "product_listing" (
	"product_id" uuid PRIMARY KEY NOT NULL,
	"public" boolean NOT NULL,
	"title_key" text NOT NULL,
	"currency" text NOT NULL,
	"price_minor" bigint NOT NULL,
	"on_sale" boolean NOT NULL,
	"available" boolean NOT NULL,
	"terms" text[] NOT NULL,
	"numbers" jsonb NOT NULL,
	"category_ids" uuid[] NOT NULL,
	"sold" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "product_listing_prices" (
	"product_id" uuid NOT NULL,
	"currency" text NOT NULL,
	"amount_minor" bigint NOT NULL,
	"on_sale" boolean NOT NULL,
	CONSTRAINT "product_listing_prices_pkey" PRIMARY KEY("product_id","currency")
);
--> statement-breakpoint
ALTER TABLE "collection_products" ADD CONSTRAINT "collection_products_collection_id_collections_id_fk" FOREIGN KEY ("collection_id") REFERENCES "public"."collections"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "collection_products" ADD CONSTRAINT "collection_products_product_id_products_id_fk" FOREIGN KEY ("product_id") REFERENCES "public"."products"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "collection_rules" ADD CONSTRAINT "collection_rules_collection_id_collections_id_fk" FOREIGN KEY ("collection_id") REFERENCES "public"."collections"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "collection_translations" ADD CONSTRAINT "collection_translations_collection_id_collections_id_fk" FOREIGN KEY ("collection_id") REFERENCES "public"."collections"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "product_listing" ADD CONSTRAINT "product_listing_product_id_products_id_fk" FOREIGN KEY ("product_id") REFERENCES "public"."products"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "product_listing_prices" ADD CONSTRAINT "product_listing_prices_product_id_products_id_fk" FOREIGN KEY ("product_id") REFERENCES "public"."products"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "collection_products_product_idx" ON "collection_products" USING btree ("product_id");--> statement-breakpoint
CREATE INDEX "collection_products_order_idx" ON "collection_products" USING btree ("collection_id","position","product_id");--> statement-breakpoint
CREATE UNIQUE INDEX "collections_slug_key" ON "collections" USING btree ("slug");--> statement-breakpoint
CREATE INDEX "collections_created_idx" ON "collections" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "product_listing_terms_idx" ON "product_listing" USING gin ("terms");--> statement-breakpoint
CREATE INDEX "product_listing_categories_idx" ON "product_listing" USING gin ("category_ids");--> statement-breakpoint
CREATE INDEX "product_listing_newest_idx" ON "product_listing" USING btree ("product_id" DESC NULLS LAST) WHERE "product_listing"."public";--> statement-breakpoint
CREATE INDEX "product_listing_price_idx" ON "product_listing" USING btree ("currency","price_minor","product_id") WHERE "product_listing"."public";--> statement-breakpoint
CREATE INDEX "product_listing_sold_idx" ON "product_listing" USING btree ("sold" DESC NULLS LAST,"product_id" DESC NULLS LAST) WHERE "product_listing"."public";--> statement-breakpoint
CREATE INDEX "product_listing_title_idx" ON "product_listing" USING btree ("title_key","product_id") WHERE "product_listing"."public";--> statement-breakpoint
CREATE INDEX "product_listing_prices_sort_idx" ON "product_listing_prices" USING btree ("currency","amount_minor","product_id");--> statement-breakpoint
-- ISO 4217 minor-unit exponents other than 2 (as @commerce/domain's CURRENCY_EXPONENTS): a price
-- filter without a market compares each product's price in its own currency's major units.
CREATE FUNCTION "currency_exponent"(code text) RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN code IN ('BIF','CLP','DJF','GNF','ISK','JPY','KMF','KRW','PYG','RWF','UGX','UYI','VND','VUV','XAF','XOF','XPF') THEN 0
    WHEN code IN ('BHD','IQD','JOD','KWD','LYD','OMR','TND') THEN 3
    WHEN code IN ('CLF','UYW') THEN 4
    ELSE 2 END
$$;
--> statement-breakpoint
-- The listing read model (docs/catalog.md, "Filters, sorting and facets"): refresh_product_listing
-- rebuilds the rows of some products from their product, variants, categories, attribute
-- definitions and base prices, and their automatic collections' membership; the triggers below
-- call it in the transaction of every change that moves what it holds. A stock change calls it
-- only when the product's availability flips (a level reaching or leaving zero), so a checkout
-- pays nothing else.
CREATE FUNCTION "refresh_product_listing"(ids uuid[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM product_listing_prices WHERE product_id = ANY(ids);
  WITH variant_rows AS (
    SELECT p.id AS product_id, coalesce(v.price_minor, p.price_minor) AS price, coalesce(v.compare_at_price_minor, p.compare_at_price_minor) AS compare_at,
      v.id AS variant_id
    FROM products p LEFT JOIN product_variants v ON v.product_id = p.id
    WHERE p.id = ANY(ids)
  ), own AS (
    SELECT r.product_id, p.currency, min(r.price) AS amount, bool_or(r.compare_at > r.price) AS on_sale
    FROM variant_rows r JOIN products p ON p.id = r.product_id GROUP BY r.product_id, p.currency
  ), other AS (
    -- Base prices at one unit in other currencies: a variant's own, else the product-wide one.
    SELECT r.product_id, c.currency,
      min(coalesce(vp.amount_minor, pp.amount_minor)) AS amount,
      coalesce(bool_or(coalesce(vp.compare_at_amount_minor, pp.compare_at_amount_minor) > coalesce(vp.amount_minor, pp.amount_minor)), false) AS on_sale
    FROM variant_rows r
    JOIN (SELECT DISTINCT product_id, currency FROM prices WHERE product_id = ANY(ids) AND price_list_id IS NULL AND min_quantity = 1) c ON c.product_id = r.product_id
    LEFT JOIN prices vp ON vp.product_id = r.product_id AND vp.variant_id = r.variant_id AND vp.price_list_id IS NULL AND vp.currency = c.currency AND vp.min_quantity = 1
    LEFT JOIN prices pp ON pp.product_id = r.product_id AND pp.variant_id IS NULL AND pp.price_list_id IS NULL AND pp.currency = c.currency AND pp.min_quantity = 1
    GROUP BY r.product_id, c.currency
    HAVING min(coalesce(vp.amount_minor, pp.amount_minor)) IS NOT NULL
  )
  INSERT INTO product_listing_prices (product_id, currency, amount_minor, on_sale)
  SELECT product_id, currency, amount, coalesce(on_sale, false) FROM own
  UNION ALL
  SELECT o.product_id, o.currency, o.amount, o.on_sale FROM other o
  WHERE NOT EXISTS (SELECT 1 FROM products p WHERE p.id = o.product_id AND p.currency = o.currency);

  WITH labelled AS (
    SELECT p.id AS product_id, t.term, t.label
    FROM products p, LATERAL (
      SELECT 'tag:' || lower(x), x FROM unnest(p.tags) x
      UNION ALL SELECT 'type:' || lower(p.product_type), p.product_type WHERE p.product_type IS NOT NULL
      UNION ALL SELECT 'vendor:' || lower(p.vendor), p.vendor WHERE p.vendor IS NOT NULL
      -- The values its variants chose; every value when it has no variants yet.
      UNION ALL SELECT 'opt:' || lower(o.value->>'name') || ':' || lower(val.value->>'value'), val.value->>'value'
        FROM jsonb_array_elements(p.options) o, jsonb_array_elements(o.value->'values') val
        WHERE NOT EXISTS (SELECT 1 FROM product_variants v WHERE v.product_id = p.id)
          OR EXISTS (SELECT 1 FROM product_variants v WHERE v.product_id = p.id AND (val.value->>'id')::uuid = ANY(v.option_value_ids))
      -- An option's own label (`opt:size` → "Size"): a facet's name, not a term.
      UNION ALL SELECT 'opt:' || lower(o.value->>'name'), o.value->>'name' FROM jsonb_array_elements(p.options) o
      -- Public, filterable attributes of the product and of its variants (a list's each value).
      UNION ALL SELECT 'attr:' || d.key || ':' || lower(x.text), x.text
        FROM attribute_definitions d
        JOIN LATERAL (
          SELECT p.attributes -> d.key AS value WHERE d.owner = 'product'
          UNION ALL SELECT v.attributes -> d.key FROM product_variants v WHERE d.owner = 'variant' AND v.product_id = p.id
        ) a ON a.value IS NOT NULL
        CROSS JOIN LATERAL (
          SELECT e #>> '{}' FROM jsonb_array_elements(CASE WHEN jsonb_typeof(a.value) = 'array' THEN a.value ELSE jsonb_build_array(a.value) END) e
        ) x(text)
        WHERE d.filterable AND d.public
    ) t(term, label)
    WHERE p.id = ANY(ids)
  ), labels AS (
    INSERT INTO facet_labels (term, label)
    SELECT DISTINCT ON (term) term, label FROM labelled WHERE label IS NOT NULL ORDER BY term, label
    ON CONFLICT (term) DO NOTHING
  ), numbers AS (
    SELECT p.id AS product_id, d.key, array_agg(DISTINCT CASE WHEN d.type = 'date' THEN replace(a.value #>> '{}', '-', '')::numeric ELSE (a.value #>> '{}')::numeric END) AS values
    FROM products p
    JOIN attribute_definitions d ON d.filterable AND d.public AND d.type IN ('integer', 'decimal', 'date')
    JOIN LATERAL (
      SELECT p.attributes -> d.key AS value WHERE d.owner = 'product'
      UNION ALL SELECT v.attributes -> d.key FROM product_variants v WHERE d.owner = 'variant' AND v.product_id = p.id
    ) a ON a.value IS NOT NULL
    WHERE p.id = ANY(ids)
    GROUP BY p.id, d.key
  ), product_terms AS (
    SELECT product_id, array_agg(DISTINCT term) AS terms FROM labelled WHERE term !~ '^opt:[^:]*$' GROUP BY product_id
  ), product_numbers AS (
    SELECT product_id, jsonb_object_agg(key, to_jsonb(values)) AS numbers FROM numbers GROUP BY product_id
  )
  INSERT INTO product_listing (product_id, public, title_key, currency, price_minor, on_sale, available, terms, numbers, category_ids)
  SELECT p.id, p.is_active, lower(p.title), p.currency, lp.amount_minor, lp.on_sale,
    p.inventory_quantity > 0 OR EXISTS (SELECT 1 FROM product_variants v WHERE v.product_id = p.id AND v.inventory_quantity > 0),
    coalesce(t.terms, '{}'),
    coalesce(n.numbers, '{}'),
    coalesce((
      WITH RECURSIVE up AS (
        SELECT pc.category_id AS id FROM product_categories pc WHERE pc.product_id = p.id
        UNION SELECT c.parent_id FROM categories c JOIN up ON c.id = up.id WHERE c.parent_id IS NOT NULL
      ) SELECT array_agg(id) FROM up), '{}')
  FROM products p
  JOIN product_listing_prices lp ON lp.product_id = p.id AND lp.currency = p.currency
  LEFT JOIN product_terms t ON t.product_id = p.id
  LEFT JOIN product_numbers n ON n.product_id = p.id
  WHERE p.id = ANY(ids)
  ON CONFLICT (product_id) DO UPDATE SET public = excluded.public, title_key = excluded.title_key, currency = excluded.currency,
    price_minor = excluded.price_minor, on_sale = excluded.on_sale, available = excluded.available, terms = excluded.terms,
    numbers = excluded.numbers, category_ids = excluded.category_ids;

  PERFORM refresh_collection_membership(ids, NULL);
END
$$;
--> statement-breakpoint
-- Whether a product's listing row matches one rule of an automatic collection; `price` is the
-- product's price in the rule's currency (null: not sold there). No subquery, so PostgreSQL
-- inlines it into the statements that decide membership.
CREATE FUNCTION "collection_rule_matches"(l product_listing, r collection_rules, price bigint) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
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
      WHEN 'greater_than' THEN coalesce(jsonb_path_exists(l.numbers -> r.name, '$[*] ? (@ > $v)', jsonb_build_object('v', r.value::numeric)), false)
      ELSE coalesce(jsonb_path_exists(l.numbers -> r.name, '$[*] ? (@ < $v)', jsonb_build_object('v', r.value::numeric)), false) END
    ELSE false END
$$;
--> statement-breakpoint
-- Re-decides the automatic collections' membership of these products (all products: null), in one
-- collection or all of them (null); manual collections are left as placed.
CREATE FUNCTION "refresh_collection_membership"(ids uuid[], only_collection uuid) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  -- Two statements, not one with "ids IS NULL OR …": the plan kept for a few products must read them by key.
  IF ids IS NULL THEN
    WITH candidates AS (
      SELECT c.id AS collection_id, l.product_id,
        CASE WHEN c.match = 'all' THEN coalesce(bool_and(collection_rule_matches(l, r, lp.amount_minor)), false) ELSE coalesce(bool_or(collection_rule_matches(l, r, lp.amount_minor)), false) END AS matches
      FROM collections c CROSS JOIN product_listing l LEFT JOIN collection_rules r ON r.collection_id = c.id
        LEFT JOIN product_listing_prices lp ON lp.product_id = l.product_id AND lp.currency = r.currency
      WHERE c.kind = 'automatic' AND (only_collection IS NULL OR c.id = only_collection)
      GROUP BY c.id, c.match, l.product_id
    ), gone AS (
      DELETE FROM collection_products cp USING candidates m
      WHERE cp.collection_id = m.collection_id AND cp.product_id = m.product_id AND NOT m.matches
    )
    INSERT INTO collection_products (collection_id, product_id)
    SELECT collection_id, product_id FROM candidates WHERE matches
    ON CONFLICT DO NOTHING;
  ELSE
    WITH candidates AS (
      SELECT c.id AS collection_id, l.product_id,
        CASE WHEN c.match = 'all' THEN coalesce(bool_and(collection_rule_matches(l, r, lp.amount_minor)), false) ELSE coalesce(bool_or(collection_rule_matches(l, r, lp.amount_minor)), false) END AS matches
      FROM collections c CROSS JOIN product_listing l LEFT JOIN collection_rules r ON r.collection_id = c.id
        LEFT JOIN product_listing_prices lp ON lp.product_id = l.product_id AND lp.currency = r.currency
      WHERE c.kind = 'automatic' AND (only_collection IS NULL OR c.id = only_collection) AND l.product_id = ANY(ids)
      GROUP BY c.id, c.match, l.product_id
    ), gone AS (
      DELETE FROM collection_products cp USING candidates m
      WHERE cp.collection_id = m.collection_id AND cp.product_id = m.product_id AND NOT m.matches
    )
    INSERT INTO collection_products (collection_id, product_id)
    SELECT collection_id, product_id FROM candidates WHERE matches
    ON CONFLICT DO NOTHING;
  END IF;
END
$$;
--> statement-breakpoint
CREATE FUNCTION "products_refresh_listing"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- A bulk load (bench/seed.js) sets commerce.defer_listing and refreshes every row once at its end.
  IF current_setting('commerce.defer_listing', true) = 'on' THEN RETURN NULL; END IF;
  PERFORM refresh_product_listing(ARRAY[NEW.id]);
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE FUNCTION "variants_refresh_listing"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('commerce.defer_listing', true) = 'on' THEN RETURN NULL; END IF;
  IF TG_OP = 'DELETE' THEN
    -- A product deleted with its variants has no row to refresh.
    PERFORM refresh_product_listing(ARRAY[OLD.product_id]) WHERE EXISTS (SELECT 1 FROM products WHERE id = OLD.product_id);
  ELSE
    PERFORM refresh_product_listing(ARRAY[NEW.product_id]);
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE FUNCTION "prices_refresh_listing"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('commerce.defer_listing', true) = 'on' THEN RETURN NULL; END IF;
  IF TG_OP = 'DELETE' THEN
    PERFORM refresh_product_listing(ARRAY[OLD.product_id]) WHERE OLD.price_list_id IS NULL AND EXISTS (SELECT 1 FROM products WHERE id = OLD.product_id);
  ELSE
    PERFORM refresh_product_listing(ARRAY[NEW.product_id]) WHERE NEW.price_list_id IS NULL;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
-- Inserts a statement at a time (an import's batch, a generation of variants): one refresh for all.
CREATE FUNCTION "inserted_refresh_listing"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('commerce.defer_listing', true) = 'on' THEN RETURN NULL; END IF;
  IF TG_TABLE_NAME = 'products' THEN
    PERFORM refresh_product_listing(array_agg(id)) FROM new_rows HAVING count(*) > 0;
  ELSE
    PERFORM refresh_product_listing(array_agg(DISTINCT product_id)) FROM new_rows HAVING count(*) > 0;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "products_listing_on_insert" AFTER INSERT ON "products" REFERENCING NEW TABLE AS "new_rows"
  FOR EACH STATEMENT EXECUTE FUNCTION "inserted_refresh_listing"();
--> statement-breakpoint
CREATE TRIGGER "variants_listing_on_insert" AFTER INSERT ON "product_variants" REFERENCING NEW TABLE AS "new_rows"
  FOR EACH STATEMENT EXECUTE FUNCTION "inserted_refresh_listing"();
--> statement-breakpoint
-- status and published_at move is_active through products_keep_status, which a column list does not see.
CREATE TRIGGER "products_refresh_listing" AFTER UPDATE OF "is_active", "status", "published_at", "title", "currency", "price_minor", "compare_at_price_minor",
  "tags", "product_type", "vendor", "options", "attributes", "categories" ON "products"
  FOR EACH ROW EXECUTE FUNCTION "products_refresh_listing"();
--> statement-breakpoint
CREATE TRIGGER "products_refresh_listing_on_stock" AFTER UPDATE OF "inventory_quantity" ON "products"
  FOR EACH ROW WHEN ((OLD.inventory_quantity > 0) <> (NEW.inventory_quantity > 0)) EXECUTE FUNCTION "products_refresh_listing"();
--> statement-breakpoint
CREATE TRIGGER "variants_refresh_listing" AFTER DELETE OR UPDATE OF "price_minor", "compare_at_price_minor", "option_value_ids", "attributes" ON "product_variants"
  FOR EACH ROW EXECUTE FUNCTION "variants_refresh_listing"();
--> statement-breakpoint
CREATE TRIGGER "variants_refresh_listing_on_stock" AFTER UPDATE OF "inventory_quantity" ON "product_variants"
  FOR EACH ROW WHEN ((OLD.inventory_quantity > 0) <> (NEW.inventory_quantity > 0)) EXECUTE FUNCTION "variants_refresh_listing"();
--> statement-breakpoint
CREATE TRIGGER "prices_refresh_listing" AFTER INSERT OR DELETE OR UPDATE OF "amount_minor", "compare_at_amount_minor" ON "prices"
  FOR EACH ROW EXECUTE FUNCTION "prices_refresh_listing"();
--> statement-breakpoint
-- A category moved under another changes the ancestors of every product under it.
CREATE FUNCTION "categories_refresh_listing"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('commerce.defer_listing', true) = 'on' THEN RETURN NULL; END IF;
  PERFORM refresh_product_listing(array_agg(l.product_id)) FROM product_listing l WHERE NEW.id = ANY(l.category_ids)
    HAVING count(*) > 0;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "categories_refresh_listing" AFTER UPDATE OF "parent_id" ON "categories"
  FOR EACH ROW WHEN (OLD.parent_id IS DISTINCT FROM NEW.parent_id) EXECUTE FUNCTION "categories_refresh_listing"();
--> statement-breakpoint
-- Filtering an attribute or not, showing it or not, changes every product that holds it.
CREATE FUNCTION "attribute_definitions_refresh_listing"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  definition attribute_definitions := coalesce(NEW, OLD);
BEGIN
  IF current_setting('commerce.defer_listing', true) = 'on' THEN RETURN NULL; END IF;
  IF definition.owner = 'product' THEN
    PERFORM refresh_product_listing(array_agg(id)) FROM products WHERE attributes ? definition.key HAVING count(*) > 0;
  ELSE
    PERFORM refresh_product_listing(array_agg(DISTINCT product_id)) FROM product_variants WHERE attributes ? definition.key HAVING count(*) > 0;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "attribute_definitions_refresh_listing" AFTER INSERT OR DELETE OR UPDATE OF "filterable", "public", "type" ON "attribute_definitions"
  FOR EACH ROW EXECUTE FUNCTION "attribute_definitions_refresh_listing"();
--> statement-breakpoint
-- The products there are now.
SELECT refresh_product_listing(array_agg(id)) FROM products HAVING count(*) > 0;
--> statement-breakpoint
-- A collection translated in a new locale adds the locale the API instances know (as product translations do).
CREATE TRIGGER "collection_translations_bump_catalog_revision"
  AFTER INSERT OR DELETE OR UPDATE ON "collection_translations"
  FOR EACH STATEMENT EXECUTE FUNCTION "bump_catalog_revision"();
