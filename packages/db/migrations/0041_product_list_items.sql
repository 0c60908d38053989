CREATE TABLE "product_list_items" (
	"product_id" uuid PRIMARY KEY NOT NULL,
	"body" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "product_list_items" ADD CONSTRAINT "product_list_items_product_id_products_id_fk" FOREIGN KEY ("product_id") REFERENCES "public"."products"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- An amount in minor units as the API shows it, major units without trailing zeros (toMajorUnits).
CREATE FUNCTION "major_units"(minor bigint, currency text) RETURNS numeric LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT trim_scale(minor::numeric / power(10::numeric, currency_exponent(currency)))
$$;
--> statement-breakpoint
-- A moment as the API shows it (Date#toISOString: milliseconds, UTC). Stable as to_char is, so that it is inlined.
CREATE FUNCTION "iso_time"(at timestamptz) RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;
--> statement-breakpoint
-- The product as a public list shows it (toListItem for the public), but for inventory_quantity
-- and updated_at, which the read adds (listItemJson): every stock move changes them.
CREATE FUNCTION "product_list_item_body"(p products) RETURNS text LANGUAGE sql STABLE AS $$
  SELECT row_to_json(item)::text FROM (SELECT
    p.id, p.title, p.slug, p.description, p.sku,
    major_units(p.price_minor, p.currency) AS price,
    major_units(p.compare_at_price_minor, p.currency) AS compare_at_price,
    coalesce(p.compare_at_price_minor > p.price_minor, false) AS on_sale,
    p.currency, trim_scale(p.weight) AS weight, p.weight_unit, p.status,
    iso_time(p.published_at) AS published_at, p.is_active, p.tags, p.product_type, p.vendor, p.barcode,
    trim_scale(p.length) AS length, trim_scale(p.width) AS width, trim_scale(p.height) AS height, p.dimension_unit,
    p.hs_code, p.country_of_origin, p.seo_title, p.seo_description,
    (SELECT coalesce(json_agg((SELECT row_to_json(op) FROM (SELECT o -> 'id' AS id, o -> 'name' AS name, (
      SELECT coalesce(json_agg((SELECT row_to_json(ov) FROM (SELECT v -> 'id' AS id, v -> 'value' AS value,
        v -> 'swatchColor' AS swatch_color, v -> 'swatchImageUrl' AS swatch_image_url) ov) ORDER BY vo), '[]')
      FROM jsonb_array_elements(o -> 'values') WITH ORDINALITY AS vs (v, vo)) AS values) op) ORDER BY oo), '[]')
     FROM jsonb_array_elements(p.options) WITH ORDINALITY AS os (o, oo)) AS options,
    p.attributes, p.image_url, p.categories, iso_time(p.created_at) AS created_at
  ) item
$$;
--> statement-breakpoint
CREATE FUNCTION "products_write_list_item"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO product_list_items (product_id, body) VALUES (NEW.id, product_list_item_body(NEW))
  ON CONFLICT (product_id) DO UPDATE SET body = excluded.body;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "products_list_item_on_insert" AFTER INSERT ON "products"
  FOR EACH ROW EXECUTE FUNCTION "products_write_list_item"();
--> statement-breakpoint
-- Every column the body shows; not inventory_quantity and updated_at (a stock move), nor the staff's attributes.
CREATE TRIGGER "products_list_item_on_update" AFTER UPDATE OF "title", "slug", "description", "sku", "price_minor", "compare_at_price_minor",
  "currency", "weight", "weight_unit", "status", "published_at", "is_active", "tags", "product_type", "vendor", "barcode", "length", "width",
  "height", "dimension_unit", "hs_code", "country_of_origin", "seo_title", "seo_description", "options", "attributes", "image_url", "categories",
  "created_at" ON "products"
  FOR EACH ROW EXECUTE FUNCTION "products_write_list_item"();
--> statement-breakpoint
INSERT INTO product_list_items (product_id, body) SELECT id, product_list_item_body(p) FROM products p;
