-- products.categories is a read model of product_categories joined to categories, kept here so
-- list pages and product reads need no joins. Every change to links, names or slugs refreshes it.
CREATE FUNCTION "product_categories_json"("product" uuid) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT coalesce(jsonb_agg(jsonb_build_object('id', c.id, 'name', c.name, 'slug', c.slug) ORDER BY c.name, c.id), '[]'::jsonb)
  FROM "product_categories" pc JOIN "categories" c ON c.id = pc.category_id
  WHERE pc.product_id = "product"
$$;
--> statement-breakpoint
CREATE FUNCTION "refresh_product_categories_from_links"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "products" p SET "categories" = "product_categories_json"(p.id)
  WHERE p.id IN (SELECT product_id FROM changed_links);
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "product_categories_refresh_on_insert"
  AFTER INSERT ON "product_categories" REFERENCING NEW TABLE AS changed_links
  FOR EACH STATEMENT EXECUTE FUNCTION "refresh_product_categories_from_links"();
--> statement-breakpoint
CREATE TRIGGER "product_categories_refresh_on_delete"
  AFTER DELETE ON "product_categories" REFERENCING OLD TABLE AS changed_links
  FOR EACH STATEMENT EXECUTE FUNCTION "refresh_product_categories_from_links"();
--> statement-breakpoint
CREATE FUNCTION "refresh_product_categories_from_categories"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "products" p SET "categories" = "product_categories_json"(p.id)
  WHERE p.id IN (
    SELECT pc.product_id FROM "product_categories" pc JOIN changed_categories c ON c.id = pc.category_id
    WHERE c.name IS DISTINCT FROM (SELECT o.name FROM old_categories o WHERE o.id = c.id)
       OR c.slug IS DISTINCT FROM (SELECT o.slug FROM old_categories o WHERE o.id = c.id)
  );
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "categories_refresh_products_on_update"
  AFTER UPDATE ON "categories" REFERENCING OLD TABLE AS old_categories NEW TABLE AS changed_categories
  FOR EACH STATEMENT EXECUTE FUNCTION "refresh_product_categories_from_categories"();
--> statement-breakpoint
UPDATE "products" p SET "categories" = "product_categories_json"(p.id)
WHERE EXISTS (SELECT 1 FROM "product_categories" pc WHERE pc.product_id = p.id);
