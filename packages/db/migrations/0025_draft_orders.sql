CREATE TYPE "public"."draft_order_status" AS ENUM('open', 'invoice_sent', 'completed');--> statement-breakpoint
CREATE TABLE "draft_orders" (
	"id" uuid PRIMARY KEY NOT NULL,
	"status" "draft_order_status" DEFAULT 'open' NOT NULL,
	"customer_id" uuid,
	"email" text,
	"currency" text NOT NULL,
	"lines" jsonb NOT NULL,
	"discount" jsonb,
	"shipping_address" jsonb,
	"billing_address" jsonb,
	"shipping_method" jsonb,
	"notes" text,
	"subtotal_minor" bigint NOT NULL,
	"discount_minor" bigint NOT NULL,
	"tax_minor" bigint NOT NULL,
	"shipping_minor" bigint NOT NULL,
	"total_minor" bigint NOT NULL,
	"invoice_token_hash" text,
	"invoice_sent_at" timestamp with time zone,
	"order_id" uuid,
	"completed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "draft_orders_totals_identity" CHECK ("draft_orders"."total_minor" = "draft_orders"."subtotal_minor" - "draft_orders"."discount_minor" + "draft_orders"."tax_minor" + "draft_orders"."shipping_minor"),
	CONSTRAINT "draft_orders_completed_has_order" CHECK (("draft_orders"."status" = 'completed') = ("draft_orders"."completed_at" is not null))
);
--> statement-breakpoint
ALTER TABLE "draft_orders" ADD CONSTRAINT "draft_orders_customer_id_customers_id_fk" FOREIGN KEY ("customer_id") REFERENCES "public"."customers"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "draft_orders" ADD CONSTRAINT "draft_orders_order_id_orders_id_fk" FOREIGN KEY ("order_id") REFERENCES "public"."orders"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "draft_orders_status_idx" ON "draft_orders" USING btree ("status","id" DESC NULLS LAST);--> statement-breakpoint
CREATE UNIQUE INDEX "draft_orders_invoice_token_key" ON "draft_orders" USING btree ("invoice_token_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "draft_orders_order_key" ON "draft_orders" USING btree ("order_id");