CREATE TABLE "category_translations" (
	"category_id" uuid NOT NULL,
	"locale" text NOT NULL,
	"name" text,
	"description" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "category_translations_pkey" PRIMARY KEY("category_id","locale"),
	CONSTRAINT "category_translations_not_empty" CHECK ("category_translations"."name" is not null or "category_translations"."description" is not null)
);
--> statement-breakpoint
CREATE TABLE "product_translations" (
	"product_id" uuid NOT NULL,
	"locale" text NOT NULL,
	"title" text,
	"description" text,
	"search_vector" "tsvector" GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, coalesce(title, '') || ' ' || coalesce(description, ''))) STORED NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "product_translations_pkey" PRIMARY KEY("product_id","locale"),
	CONSTRAINT "product_translations_not_empty" CHECK ("product_translations"."title" is not null or "product_translations"."description" is not null)
);
--> statement-breakpoint
CREATE TABLE "variant_translations" (
	"variant_id" uuid NOT NULL,
	"locale" text NOT NULL,
	"title" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "variant_translations_pkey" PRIMARY KEY("variant_id","locale")
);
--> statement-breakpoint
ALTER TABLE "category_translations" ADD CONSTRAINT "category_translations_category_id_categories_id_fk" FOREIGN KEY ("category_id") REFERENCES "public"."categories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "product_translations" ADD CONSTRAINT "product_translations_product_id_products_id_fk" FOREIGN KEY ("product_id") REFERENCES "public"."products"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "variant_translations" ADD CONSTRAINT "variant_translations_variant_id_product_variants_id_fk" FOREIGN KEY ("variant_id") REFERENCES "public"."product_variants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "product_translations_search_idx" ON "product_translations" USING gin ("search_vector");--> statement-breakpoint
-- A translation's words change what a search in its locale finds, so its list totals.
CREATE TRIGGER "product_translations_bump_catalog_revision"
  AFTER INSERT OR DELETE OR UPDATE OF "title", "description" ON "product_translations"
  FOR EACH STATEMENT EXECUTE FUNCTION "bump_catalog_revision"();
--> statement-breakpoint
-- A new translation may be the first in its locale: the API instances list the translated
-- locales again when the revision moves (plugins/translated-locales.ts).
CREATE TRIGGER "variant_translations_bump_catalog_revision"
  AFTER INSERT ON "variant_translations"
  FOR EACH STATEMENT EXECUTE FUNCTION "bump_catalog_revision"();
--> statement-breakpoint
CREATE TRIGGER "category_translations_bump_catalog_revision"
  AFTER INSERT ON "category_translations"
  FOR EACH STATEMENT EXECUTE FUNCTION "bump_catalog_revision"();
