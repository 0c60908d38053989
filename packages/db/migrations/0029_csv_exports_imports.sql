ALTER TYPE "public"."movement_reason" ADD VALUE 'import';--> statement-breakpoint
CREATE TABLE "exports" (
	"id" uuid PRIMARY KEY NOT NULL,
	"resource" text NOT NULL,
	"filters" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"row_count" integer DEFAULT 0 NOT NULL,
	"storage_key" text,
	"size_bytes" bigint,
	"error" text,
	"created_by" text,
	"heartbeat_at" timestamp with time zone,
	"started_at" timestamp with time zone,
	"completed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "import_rows" (
	"import_id" uuid NOT NULL,
	"row" integer NOT NULL,
	"action" text NOT NULL,
	"resource_id" uuid,
	"key" text,
	"reason" text,
	CONSTRAINT "import_rows_pkey" PRIMARY KEY("import_id","row")
);
--> statement-breakpoint
CREATE TABLE "imports" (
	"id" uuid PRIMARY KEY NOT NULL,
	"resource" text NOT NULL,
	"dry_run" boolean NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"storage_key" text NOT NULL,
	"file_name" text,
	"size_bytes" bigint NOT NULL,
	"processed_rows" integer DEFAULT 0 NOT NULL,
	"created" integer DEFAULT 0 NOT NULL,
	"updated" integer DEFAULT 0 NOT NULL,
	"refused" integer DEFAULT 0 NOT NULL,
	"error" text,
	"created_by" text,
	"heartbeat_at" timestamp with time zone,
	"started_at" timestamp with time zone,
	"completed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "import_rows" ADD CONSTRAINT "import_rows_import_id_imports_id_fk" FOREIGN KEY ("import_id") REFERENCES "public"."imports"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "import_rows_refused_idx" ON "import_rows" USING btree ("import_id","row") WHERE "import_rows"."action" = 'refuse';--> statement-breakpoint
-- A link change rewrites only the products whose categories it changes: an import writes new
-- products with their categories already in place, and rewriting each again (every index of the
-- row, the search vector recomputed) cost it a third of its time.
CREATE OR REPLACE FUNCTION "refresh_product_categories_from_links"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "products" p SET "categories" = c.json
  FROM (SELECT l.product_id, "product_categories_json"(l.product_id) AS json FROM (SELECT DISTINCT product_id FROM changed_links) l) c
  WHERE p.id = c.product_id AND p."categories" IS DISTINCT FROM c.json;
  RETURN NULL;
END
$$;
