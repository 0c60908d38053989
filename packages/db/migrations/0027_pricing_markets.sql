CREATE TYPE "public"."campaign_budget_type" AS ENUM('spend', 'usage');--> statement-breakpoint
CREATE TYPE "public"."price_list_type" AS ENUM('sale', 'override');--> statement-breakpoint
CREATE TYPE "public"."promotion_stacking" AS ENUM('combinable', 'exclusive');--> statement-breakpoint
ALTER TYPE "public"."coupon_type" RENAME TO "promotion_type";--> statement-breakpoint
ALTER TYPE "public"."promotion_type" ADD VALUE 'buy_x_get_y';--> statement-breakpoint
CREATE TABLE "customer_groups" (
	"id" uuid PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "campaigns" (
	"id" uuid PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"budget_type" "campaign_budget_type",
	"budget_limit" bigint,
	"budget_used" bigint DEFAULT 0 NOT NULL,
	"currency" text,
	"starts_at" timestamp with time zone,
	"ends_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "campaigns_budget_within_limit" CHECK ("campaigns"."budget_used" >= 0 and ("campaigns"."budget_limit" is null or "campaigns"."budget_used" <= "campaigns"."budget_limit")),
	CONSTRAINT "campaigns_spend_currency" CHECK ("campaigns"."budget_type" is distinct from 'spend' or "campaigns"."currency" is not null)
);
--> statement-breakpoint
CREATE TABLE "price_lists" (
	"id" uuid PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"type" "price_list_type" DEFAULT 'sale' NOT NULL,
	"priority" integer DEFAULT 0 NOT NULL,
	"is_active" boolean DEFAULT true NOT NULL,
	"starts_at" timestamp with time zone,
	"ends_at" timestamp with time zone,
	"customer_group_ids" uuid[] DEFAULT '{}'::uuid[] NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "price_lists_window" CHECK ("price_lists"."starts_at" is null or "price_lists"."ends_at" is null or "price_lists"."starts_at" < "price_lists"."ends_at")
);
--> statement-breakpoint
CREATE TABLE "prices" (
	"id" uuid PRIMARY KEY NOT NULL,
	"product_id" uuid NOT NULL,
	"variant_id" uuid,
	"price_list_id" uuid,
	"currency" text NOT NULL,
	"amount_minor" bigint NOT NULL,
	"min_quantity" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "prices_key" UNIQUE NULLS NOT DISTINCT("product_id","variant_id","price_list_id","currency","min_quantity"),
	CONSTRAINT "prices_amount_nonnegative" CHECK ("prices"."amount_minor" >= 0),
	CONSTRAINT "prices_min_quantity_positive" CHECK ("prices"."min_quantity" >= 1)
);
--> statement-breakpoint
CREATE TABLE "promotion_usages" (
	"id" uuid PRIMARY KEY NOT NULL,
	"promotion_id" uuid NOT NULL,
	"campaign_id" uuid,
	"payment_id" uuid NOT NULL,
	"order_id" uuid,
	"customer_key" text,
	"discount_minor" bigint NOT NULL,
	"currency" text NOT NULL,
	"released_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "customer_group_members" (
	"group_id" uuid NOT NULL,
	"customer_id" uuid NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "customer_group_members_pkey" PRIMARY KEY("customer_id","group_id")
);
--> statement-breakpoint
ALTER TABLE "coupons" RENAME TO "promotions";--> statement-breakpoint
ALTER TABLE "promotions" RENAME CONSTRAINT "coupons_pkey" TO "promotions_pkey";--> statement-breakpoint
ALTER TABLE "promotions" RENAME CONSTRAINT "coupons_percent_range" TO "promotions_percent_range";--> statement-breakpoint
ALTER TABLE "promotions" RENAME CONSTRAINT "coupons_amount_nonnegative" TO "promotions_amount_nonnegative";--> statement-breakpoint
ALTER TABLE "promotions" RENAME CONSTRAINT "coupons_times_used_within_limit" TO "promotions_times_used_within_limit";--> statement-breakpoint
ALTER INDEX "coupons_code_key" RENAME TO "promotions_code_key";--> statement-breakpoint
ALTER TABLE "promotions" ALTER COLUMN "code" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "promotions" ADD COLUMN "name" text;--> statement-breakpoint
UPDATE "promotions" SET "name" = "code";--> statement-breakpoint
ALTER TABLE "promotions" ALTER COLUMN "name" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "promotions" ADD COLUMN "description" text;--> statement-breakpoint
ALTER TABLE "promotions" ADD COLUMN "stacking" "promotion_stacking" DEFAULT 'combinable' NOT NULL;--> statement-breakpoint
ALTER TABLE "promotions" ADD COLUMN "condition_product_ids" uuid[] DEFAULT '{}'::uuid[] NOT NULL;--> statement-breakpoint
ALTER TABLE "promotions" ADD COLUMN "condition_category_ids" uuid[] DEFAULT '{}'::uuid[] NOT NULL;--> statement-breakpoint
ALTER TABLE "promotions" ADD COLUMN "customer_group_ids" uuid[] DEFAULT '{}'::uuid[] NOT NULL;--> statement-breakpoint
ALTER TABLE "promotions" ADD COLUMN "target_product_ids" uuid[] DEFAULT '{}'::uuid[] NOT NULL;--> statement-breakpoint
ALTER TABLE "promotions" ADD COLUMN "target_category_ids" uuid[] DEFAULT '{}'::uuid[] NOT NULL;--> statement-breakpoint
ALTER TABLE "promotions" ADD COLUMN "buy_quantity" integer;--> statement-breakpoint
ALTER TABLE "promotions" ADD COLUMN "get_quantity" integer;--> statement-breakpoint
ALTER TABLE "promotions" ADD COLUMN "max_applications" integer;--> statement-breakpoint
ALTER TABLE "promotions" ADD COLUMN "per_customer_limit" integer;--> statement-breakpoint
ALTER TABLE "promotions" ADD COLUMN "campaign_id" uuid;--> statement-breakpoint
ALTER TABLE "promotions" ADD CONSTRAINT "promotions_buy_x_get_y" CHECK ("promotions"."type"::text <> 'buy_x_get_y' or ("promotions"."buy_quantity" > 0 and "promotions"."get_quantity" > 0 and "promotions"."percent_off_ppm" is not null));--> statement-breakpoint
ALTER TABLE "cart_coupons" DROP CONSTRAINT "cart_coupons_coupon_id_coupons_id_fk";--> statement-breakpoint
ALTER TABLE "cart_coupons" ADD CONSTRAINT "cart_coupons_coupon_id_promotions_id_fk" FOREIGN KEY ("coupon_id") REFERENCES "public"."promotions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "checkout_reservations" RENAME COLUMN "coupon_ids" TO "promotion_ids";--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "promotions" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
UPDATE "orders" SET "promotions" = (
  SELECT coalesce(jsonb_agg(c || jsonb_build_object('name', c->>'code', 'shipping_discount_minor', 0)), '[]'::jsonb) FROM jsonb_array_elements("coupons") c
) WHERE "coupons" <> '[]'::jsonb;--> statement-breakpoint
UPDATE "orders" SET "promotions" = (
  SELECT jsonb_agg(CASE WHEN p->>'type' = 'free_shipping' THEN p || jsonb_build_object('discount_minor', 0, 'shipping_discount_minor', (p->>'discount_minor')::bigint) ELSE p END) FROM jsonb_array_elements("promotions") p
) WHERE "promotions" @> '[{"type": "free_shipping"}]'::jsonb;--> statement-breakpoint
ALTER TABLE "prices" ADD CONSTRAINT "prices_product_id_products_id_fk" FOREIGN KEY ("product_id") REFERENCES "public"."products"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "prices" ADD CONSTRAINT "prices_variant_id_product_variants_id_fk" FOREIGN KEY ("variant_id") REFERENCES "public"."product_variants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "prices" ADD CONSTRAINT "prices_price_list_id_price_lists_id_fk" FOREIGN KEY ("price_list_id") REFERENCES "public"."price_lists"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "promotions" ADD CONSTRAINT "promotions_campaign_id_campaigns_id_fk" FOREIGN KEY ("campaign_id") REFERENCES "public"."campaigns"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "promotion_usages" ADD CONSTRAINT "promotion_usages_promotion_id_promotions_id_fk" FOREIGN KEY ("promotion_id") REFERENCES "public"."promotions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "promotion_usages" ADD CONSTRAINT "promotion_usages_campaign_id_campaigns_id_fk" FOREIGN KEY ("campaign_id") REFERENCES "public"."campaigns"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "promotion_usages" ADD CONSTRAINT "promotion_usages_payment_id_payments_id_fk" FOREIGN KEY ("payment_id") REFERENCES "public"."payments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "promotion_usages" ADD CONSTRAINT "promotion_usages_order_id_orders_id_fk" FOREIGN KEY ("order_id") REFERENCES "public"."orders"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "customer_groups_name_key" ON "customer_groups" USING btree (lower("name"));--> statement-breakpoint
CREATE INDEX "prices_price_list_idx" ON "prices" USING btree ("price_list_id");--> statement-breakpoint
CREATE INDEX "promotions_automatic_idx" ON "promotions" USING btree ("id") WHERE "promotions"."code" is null and "promotions"."is_active";--> statement-breakpoint
CREATE INDEX "promotion_usages_customer_idx" ON "promotion_usages" USING btree ("promotion_id","customer_key") WHERE "promotion_usages"."released_at" is null;--> statement-breakpoint
CREATE INDEX "promotion_usages_payment_idx" ON "promotion_usages" USING btree ("payment_id");--> statement-breakpoint
CREATE INDEX "promotion_usages_order_idx" ON "promotion_usages" USING btree ("order_id");--> statement-breakpoint
ALTER TABLE "customer_group_members" ADD CONSTRAINT "customer_group_members_group_id_customer_groups_id_fk" FOREIGN KEY ("group_id") REFERENCES "public"."customer_groups"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "customer_group_members" ADD CONSTRAINT "customer_group_members_customer_id_customers_id_fk" FOREIGN KEY ("customer_id") REFERENCES "public"."customers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "customer_group_members_group_idx" ON "customer_group_members" USING btree ("group_id");
