CREATE TYPE "public"."attribute_owner" AS ENUM('product', 'variant');--> statement-breakpoint
CREATE TYPE "public"."attribute_type" AS ENUM('text', 'rich_text', 'integer', 'decimal', 'boolean', 'date', 'select', 'multi_select', 'product_reference');--> statement-breakpoint
CREATE TABLE "attribute_definitions" (
	"id" uuid PRIMARY KEY NOT NULL,
	"key" text NOT NULL,
	"owner" "attribute_owner" DEFAULT 'product' NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"type" "attribute_type" NOT NULL,
	"unit" text,
	"choices" text[] DEFAULT '{}'::text[] NOT NULL,
	"rules" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"filterable" boolean DEFAULT false NOT NULL,
	"public" boolean DEFAULT true NOT NULL,
	"position" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "product_translations" DROP CONSTRAINT "product_translations_not_empty";--> statement-breakpoint
ALTER TABLE "product_translations" ADD COLUMN "attributes" jsonb;--> statement-breakpoint
ALTER TABLE "product_translations" ADD COLUMN "options" jsonb;--> statement-breakpoint
ALTER TABLE "product_variants" ADD COLUMN "attributes" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "product_variants" ADD COLUMN "staff_attributes" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "products" ADD COLUMN "attributes" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "products" ADD COLUMN "staff_attributes" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "attribute_definitions_key" ON "attribute_definitions" USING btree ("owner","key");--> statement-breakpoint
CREATE INDEX "attribute_definitions_order_idx" ON "attribute_definitions" USING btree ("owner","position","id");--> statement-breakpoint
ALTER TABLE "product_translations" ADD CONSTRAINT "product_translations_not_empty" CHECK ("product_translations"."title" is not null or "product_translations"."description" is not null or "product_translations"."attributes" is not null or "product_translations"."options" is not null);