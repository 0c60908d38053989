-- List totals are cached per catalog revision; every write that can change which products a
-- list or filter shows bumps it (stock changes do not, so checkouts never contend on this row).
INSERT INTO "catalog_revision" ("singleton", "revision") VALUES (true, 0) ON CONFLICT DO NOTHING;
--> statement-breakpoint
CREATE FUNCTION "bump_catalog_revision"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "catalog_revision" SET "revision" = "revision" + 1 WHERE "singleton";
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "products_bump_catalog_revision"
  AFTER INSERT OR DELETE OR UPDATE OF "is_active", "title", "description" ON "products"
  FOR EACH STATEMENT EXECUTE FUNCTION "bump_catalog_revision"();
--> statement-breakpoint
CREATE TRIGGER "product_categories_bump_catalog_revision"
  AFTER INSERT OR DELETE OR UPDATE ON "product_categories"
  FOR EACH STATEMENT EXECUTE FUNCTION "bump_catalog_revision"();
--> statement-breakpoint
CREATE TRIGGER "categories_bump_catalog_revision"
  AFTER INSERT OR DELETE OR UPDATE OF "slug" ON "categories"
  FOR EACH STATEMENT EXECUTE FUNCTION "bump_catalog_revision"();
--> statement-breakpoint
CREATE TRIGGER "catalog_bump_on_truncate"
  AFTER TRUNCATE ON "products"
  FOR EACH STATEMENT EXECUTE FUNCTION "bump_catalog_revision"();
