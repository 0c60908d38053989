CREATE TYPE "public"."dimension_unit" AS ENUM('mm', 'cm', 'm', 'in', 'ft');--> statement-breakpoint
CREATE TYPE "public"."product_status" AS ENUM('draft', 'active', 'archived');--> statement-breakpoint
CREATE TABLE "product_slug_redirects" (
	"slug" text PRIMARY KEY NOT NULL,
	"product_id" uuid NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "product_variants" ADD COLUMN "compare_at_price_minor" bigint;--> statement-breakpoint
ALTER TABLE "product_variants" ADD COLUMN "barcode" text;--> statement-breakpoint
ALTER TABLE "product_variants" ADD COLUMN "option_value_ids" uuid[] DEFAULT '{}'::uuid[] NOT NULL;--> statement-breakpoint
ALTER TABLE "products" ADD COLUMN "status" "product_status" DEFAULT 'active' NOT NULL;--> statement-breakpoint
ALTER TABLE "products" ADD COLUMN "published_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "products" ADD COLUMN "compare_at_price_minor" bigint;--> statement-breakpoint
ALTER TABLE "products" ADD COLUMN "tags" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "products" ADD COLUMN "product_type" text;--> statement-breakpoint
ALTER TABLE "products" ADD COLUMN "vendor" text;--> statement-breakpoint
ALTER TABLE "products" ADD COLUMN "barcode" text;--> statement-breakpoint
ALTER TABLE "products" ADD COLUMN "length" numeric(14, 4);--> statement-breakpoint
ALTER TABLE "products" ADD COLUMN "width" numeric(14, 4);--> statement-breakpoint
ALTER TABLE "products" ADD COLUMN "height" numeric(14, 4);--> statement-breakpoint
ALTER TABLE "products" ADD COLUMN "dimension_unit" "dimension_unit" DEFAULT 'cm' NOT NULL;--> statement-breakpoint
ALTER TABLE "products" ADD COLUMN "hs_code" text;--> statement-breakpoint
ALTER TABLE "products" ADD COLUMN "country_of_origin" text;--> statement-breakpoint
ALTER TABLE "products" ADD COLUMN "seo_title" text;--> statement-breakpoint
ALTER TABLE "products" ADD COLUMN "seo_description" text;--> statement-breakpoint
ALTER TABLE "products" ADD COLUMN "options" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "prices" ADD COLUMN "compare_at_amount_minor" bigint;--> statement-breakpoint
ALTER TABLE "product_slug_redirects" ADD CONSTRAINT "product_slug_redirects_product_id_products_id_fk" FOREIGN KEY ("product_id") REFERENCES "public"."products"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "product_slug_redirects_product_idx" ON "product_slug_redirects" USING btree ("product_id");--> statement-breakpoint
CREATE UNIQUE INDEX "product_variants_combination_key" ON "product_variants" USING btree ("product_id","option_value_ids") WHERE "product_variants"."option_value_ids" <> '{}'::uuid[];--> statement-breakpoint
CREATE INDEX "products_scheduled_idx" ON "products" USING btree ("published_at") WHERE "products"."status" = 'active' and not "products"."is_active";--> statement-breakpoint
-- Inactive products were soft-deleted ones: archived. The active ones went public when made.
UPDATE "products" SET "status" = 'archived' WHERE NOT "is_active";--> statement-breakpoint
UPDATE "products" SET "published_at" = "created_at" WHERE "is_active";--> statement-breakpoint
ALTER TABLE "product_variants" ADD CONSTRAINT "product_variants_compare_at_nonnegative" CHECK ("product_variants"."compare_at_price_minor" >= 0);--> statement-breakpoint
ALTER TABLE "products" ADD CONSTRAINT "products_compare_at_nonnegative" CHECK ("products"."compare_at_price_minor" >= 0);--> statement-breakpoint
ALTER TABLE "products" ADD CONSTRAINT "products_active_when_public" CHECK (not "products"."is_active" or "products"."status" = 'active');--> statement-breakpoint
ALTER TABLE "prices" ADD CONSTRAINT "prices_compare_at_nonnegative" CHECK ("prices"."compare_at_amount_minor" >= 0);--> statement-breakpoint
-- `is_active` (public now) follows `status` and `published_at`; written alone, as clients of the
-- API before statuses and CSV files do, it sets the status (true: active, false: archived). An
-- active product gets its `published_at` when it has none; a later one schedules the
-- publish-product job, which makes it public at that moment (docs/catalog.md, "Status").
CREATE FUNCTION "products_keep_status"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    IF NEW.status = 'active' AND NOT NEW.is_active AND (NEW.published_at IS NULL OR NEW.published_at <= now()) THEN
      NEW.status := 'archived';
    END IF;
  ELSIF NEW.status IS NOT DISTINCT FROM OLD.status AND NEW.published_at IS NOT DISTINCT FROM OLD.published_at
    AND NEW.is_active IS DISTINCT FROM OLD.is_active THEN
    NEW.status := CASE WHEN NEW.is_active THEN 'active'::product_status ELSE 'archived'::product_status END;
    IF NEW.is_active AND NEW.published_at > now() THEN
      NEW.published_at := now();
    END IF;
  END IF;
  IF NEW.status = 'active' THEN
    NEW.published_at := coalesce(NEW.published_at, now());
  END IF;
  NEW.is_active := NEW.status = 'active' AND NEW.published_at <= now();
  IF NEW.status = 'active' AND NEW.published_at > now()
    AND (TG_OP = 'INSERT' OR OLD.status <> 'active' OR NEW.published_at IS DISTINCT FROM OLD.published_at) THEN
    PERFORM graphile_worker.add_job('publish-product', json_build_object('id', NEW.id), run_at := NEW.published_at,
      max_attempts := 25, job_key := 'publish-product:' || NEW.id);
  END IF;
  RETURN NEW;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "products_keep_status" BEFORE INSERT OR UPDATE OF "is_active", "status", "published_at" ON "products"
  FOR EACH ROW EXECUTE FUNCTION "products_keep_status"();
--> statement-breakpoint
-- A status or a schedule changes which products a list shows, as `is_active` does.
DROP TRIGGER "products_bump_catalog_revision" ON "products";
--> statement-breakpoint
CREATE TRIGGER "products_bump_catalog_revision"
  AFTER INSERT OR DELETE OR UPDATE OF "is_active", "title", "description", "status", "published_at" ON "products"
  FOR EACH STATEMENT EXECUTE FUNCTION "bump_catalog_revision"();
