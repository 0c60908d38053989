CREATE TABLE "order_edits" (
	"id" uuid PRIMARY KEY NOT NULL,
	"order_id" uuid NOT NULL,
	"reason" text,
	"changes" jsonb NOT NULL,
	"total_before_minor" bigint NOT NULL,
	"total_after_minor" bigint NOT NULL,
	"refunded_minor" bigint DEFAULT 0 NOT NULL,
	"owed_minor" bigint DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "order_items" ADD COLUMN "canceled_quantity" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "refunds" ADD COLUMN "order_edit_id" uuid;--> statement-breakpoint
ALTER TABLE "order_edits" ADD CONSTRAINT "order_edits_order_id_orders_id_fk" FOREIGN KEY ("order_id") REFERENCES "public"."orders"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "order_edits_order_idx" ON "order_edits" USING btree ("order_id");--> statement-breakpoint
ALTER TABLE "refunds" ADD CONSTRAINT "refunds_order_edit_id_order_edits_id_fk" FOREIGN KEY ("order_edit_id") REFERENCES "public"."order_edits"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "refunds_order_edit_idx" ON "refunds" USING btree ("order_edit_id") WHERE "refunds"."order_edit_id" is not null;--> statement-breakpoint
ALTER TABLE "order_items" ADD CONSTRAINT "order_items_canceled_within_unfulfilled" CHECK ("order_items"."canceled_quantity" >= 0 and "order_items"."canceled_quantity" + "order_items"."fulfilled_quantity" <= "order_items"."quantity");