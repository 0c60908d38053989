CREATE TYPE "public"."capture_mode" AS ENUM('automatic', 'manual');--> statement-breakpoint
CREATE TYPE "public"."payment_state" AS ENUM('pending', 'requires_action', 'authorized', 'captured', 'partially_captured', 'partially_refunded', 'refunded', 'failed', 'canceled');--> statement-breakpoint
CREATE TYPE "public"."reservation_status" AS ENUM('held', 'converted', 'released');--> statement-breakpoint
CREATE TABLE "checkout_reservations" (
	"payment_id" uuid PRIMARY KEY NOT NULL,
	"checkout_id" uuid NOT NULL,
	"status" "reservation_status" DEFAULT 'held' NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"stock" jsonb NOT NULL,
	"coupon_ids" uuid[] NOT NULL,
	"placement" json NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "provider_events" (
	"provider" text NOT NULL,
	"event_id" text NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "provider_events_provider_event_id_pk" PRIMARY KEY("provider","event_id")
);
--> statement-breakpoint
ALTER TABLE "payments" DROP CONSTRAINT "payments_refunds_within_amount";--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "authorized_minor" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "capture_mode" "capture_mode" DEFAULT 'automatic' NOT NULL;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "captured_minor" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Every succeeded charge so far was captured in full when it was made.
UPDATE "payments" SET "captured_minor" = "amount_minor" WHERE "status" = 'succeeded';--> statement-breakpoint
ALTER TABLE "payments" ALTER COLUMN "status" SET DATA TYPE "public"."payment_state" USING (CASE
  WHEN "status"::text <> 'succeeded' THEN 'failed'
  WHEN "refunded_minor" = 0 THEN 'captured'
  WHEN "refunded_minor" >= "amount_minor" THEN 'refunded'
  ELSE 'partially_refunded' END)::"public"."payment_state";--> statement-breakpoint
ALTER TABLE "checkout_reservations" ADD CONSTRAINT "checkout_reservations_payment_id_payments_id_fk" FOREIGN KEY ("payment_id") REFERENCES "public"."payments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "checkout_reservations" ADD CONSTRAINT "checkout_reservations_checkout_id_checkouts_id_fk" FOREIGN KEY ("checkout_id") REFERENCES "public"."checkouts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "checkout_reservations_held_key" ON "checkout_reservations" USING btree ("checkout_id") WHERE "checkout_reservations"."status" = 'held';--> statement-breakpoint
CREATE INDEX "checkout_reservations_expiry_idx" ON "checkout_reservations" USING btree ("expires_at") WHERE "checkout_reservations"."status" = 'held';--> statement-breakpoint
CREATE INDEX "payments_provider_reference_idx" ON "payments" USING btree ("provider","provider_reference");--> statement-breakpoint
CREATE INDEX "payments_unsettled_idx" ON "payments" USING btree ("updated_at") WHERE "payments"."status" in ('pending', 'requires_action');--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_authorized_nonnegative" CHECK ("orders"."authorized_minor" >= 0);--> statement-breakpoint
ALTER TABLE "payments" ADD CONSTRAINT "payments_captured_within_amount" CHECK ("payments"."captured_minor" >= 0 and "payments"."captured_minor" <= "payments"."amount_minor");--> statement-breakpoint
ALTER TABLE "payments" ADD CONSTRAINT "payments_refunds_within_captured" CHECK ("payments"."refunded_minor" >= 0 and "payments"."refunded_minor" <= "payments"."captured_minor");--> statement-breakpoint
DROP TYPE "public"."charge_status";