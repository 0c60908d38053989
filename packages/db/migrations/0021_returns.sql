CREATE TYPE "public"."return_status" AS ENUM('requested', 'approved', 'declined', 'received', 'canceled');--> statement-breakpoint
CREATE TABLE "return_items" (
	"return_id" uuid NOT NULL,
	"order_item_id" uuid NOT NULL,
	"quantity" integer NOT NULL,
	"restocked_quantity" integer DEFAULT 0 NOT NULL,
	"damaged_quantity" integer DEFAULT 0 NOT NULL,
	"subtotal_minor" bigint NOT NULL,
	"discount_minor" bigint NOT NULL,
	"tax_minor" bigint NOT NULL,
	"total_minor" bigint NOT NULL,
	CONSTRAINT "return_items_pkey" PRIMARY KEY("return_id","order_item_id"),
	CONSTRAINT "return_items_quantity_positive" CHECK ("return_items"."quantity" > 0),
	CONSTRAINT "return_items_received_units" CHECK ("return_items"."restocked_quantity" >= 0 and "return_items"."damaged_quantity" >= 0 and "return_items"."restocked_quantity" + "return_items"."damaged_quantity" in (0, "return_items"."quantity")),
	CONSTRAINT "return_items_totals_identity" CHECK ("return_items"."total_minor" = "return_items"."subtotal_minor" - "return_items"."discount_minor" + "return_items"."tax_minor")
);
--> statement-breakpoint
CREATE TABLE "returns" (
	"id" uuid PRIMARY KEY NOT NULL,
	"order_id" uuid NOT NULL,
	"status" "return_status" DEFAULT 'requested' NOT NULL,
	"currency" text NOT NULL,
	"reason" text,
	"decline_reason" text,
	"merchandise_minor" bigint NOT NULL,
	"shipping_minor" bigint DEFAULT 0 NOT NULL,
	"fee_minor" bigint DEFAULT 0 NOT NULL,
	"total_minor" bigint NOT NULL,
	"refunded_minor" bigint DEFAULT 0 NOT NULL,
	"approved_at" timestamp with time zone,
	"declined_at" timestamp with time zone,
	"received_at" timestamp with time zone,
	"canceled_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "returns_refund_identity" CHECK ("returns"."total_minor" = "returns"."merchandise_minor" + "returns"."shipping_minor" - "returns"."fee_minor" and "returns"."total_minor" >= 0),
	CONSTRAINT "returns_refunded_within_refund" CHECK ("returns"."refunded_minor" between 0 and "returns"."total_minor")
);
--> statement-breakpoint
ALTER TABLE "order_items" ADD COLUMN "returned_quantity" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "refunds" ADD COLUMN "return_id" uuid;--> statement-breakpoint
ALTER TABLE "return_items" ADD CONSTRAINT "return_items_return_id_returns_id_fk" FOREIGN KEY ("return_id") REFERENCES "public"."returns"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "return_items" ADD CONSTRAINT "return_items_order_item_id_order_items_id_fk" FOREIGN KEY ("order_item_id") REFERENCES "public"."order_items"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "returns" ADD CONSTRAINT "returns_order_id_orders_id_fk" FOREIGN KEY ("order_id") REFERENCES "public"."orders"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "returns_order_idx" ON "returns" USING btree ("order_id");--> statement-breakpoint
ALTER TABLE "refunds" ADD CONSTRAINT "refunds_return_id_returns_id_fk" FOREIGN KEY ("return_id") REFERENCES "public"."returns"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "refunds_return_idx" ON "refunds" USING btree ("return_id") WHERE "refunds"."return_id" is not null;--> statement-breakpoint
ALTER TABLE "order_items" ADD CONSTRAINT "order_items_returned_within_fulfilled" CHECK ("order_items"."returned_quantity" between 0 and "order_items"."fulfilled_quantity");