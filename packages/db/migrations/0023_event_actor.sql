ALTER TABLE "events" ADD COLUMN "actor" text;--> statement-breakpoint
CREATE INDEX "events_resource_idx" ON "events" USING btree ("resource_id","sequence");