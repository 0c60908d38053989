ALTER TYPE "public"."payment_status" ADD VALUE 'authorized' BEFORE 'paid';--> statement-breakpoint
ALTER TYPE "public"."payment_status" ADD VALUE 'partially_captured' BEFORE 'paid';