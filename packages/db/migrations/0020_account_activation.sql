ALTER TABLE "users" ADD COLUMN "activated_at" timestamp with time zone;--> statement-breakpoint
-- Accounts made before: they could be signed in to from the start.
UPDATE "users" SET "activated_at" = "created_at";