CREATE TABLE "uploads" (
	"id" uuid PRIMARY KEY NOT NULL,
	"product_id" uuid NOT NULL,
	"storage_key" text NOT NULL,
	"content_type" text NOT NULL,
	"token_hash" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"received_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "product_images" ADD COLUMN "storage_key" text;--> statement-breakpoint
ALTER TABLE "product_images" ADD COLUMN "content_type" text;--> statement-breakpoint
ALTER TABLE "product_images" ADD COLUMN "size_bytes" integer;--> statement-breakpoint
ALTER TABLE "product_images" ADD COLUMN "width" integer;--> statement-breakpoint
ALTER TABLE "product_images" ADD COLUMN "height" integer;--> statement-breakpoint
ALTER TABLE "product_images" ADD COLUMN "thumbnails" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "products" ADD COLUMN "image_url_explicit" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "uploads" ADD CONSTRAINT "uploads_product_id_products_id_fk" FOREIGN KEY ("product_id") REFERENCES "public"."products"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "uploads_expires_idx" ON "uploads" USING btree ("expires_at");--> statement-breakpoint
-- An image_url already set was set through the API; an empty one follows the first image from now on.
UPDATE "products" SET "image_url_explicit" = true WHERE "image_url" IS NOT NULL;--> statement-breakpoint
UPDATE "products" p SET "image_url" = (
  SELECT i."url" FROM "product_images" i WHERE i."product_id" = p."id" ORDER BY i."position", i."id" LIMIT 1
) WHERE p."image_url" IS NULL AND EXISTS (SELECT 1 FROM "product_images" i WHERE i."product_id" = p."id");
