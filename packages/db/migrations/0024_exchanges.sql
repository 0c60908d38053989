ALTER TABLE "returns" DROP CONSTRAINT "returns_refunded_within_refund";--> statement-breakpoint
ALTER TABLE "returns" ADD COLUMN "credit_minor" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "returns" ADD COLUMN "exchange_edit_id" uuid;--> statement-breakpoint
ALTER TABLE "returns" ADD CONSTRAINT "returns_exchange_edit_id_order_edits_id_fk" FOREIGN KEY ("exchange_edit_id") REFERENCES "public"."order_edits"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "returns" ADD CONSTRAINT "returns_settled_within_refund" CHECK ("returns"."refunded_minor" >= 0 and "returns"."credit_minor" >= 0 and "returns"."refunded_minor" + "returns"."credit_minor" <= "returns"."total_minor");