CREATE TABLE "event_sequences" (
	"resource_id" uuid PRIMARY KEY NOT NULL,
	"last_sequence" integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "resource_id" uuid;--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "sequence" integer;--> statement-breakpoint
-- Events written before: the order an order's or payment's event is about, else the id in its data, else the event itself; numbered in id order.
UPDATE "events" SET "resource_id" = coalesce(
	CASE WHEN data->>'order_id' ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN (data->>'order_id')::uuid END,
	CASE WHEN data->>'id' ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN (data->>'id')::uuid END,
	"id");--> statement-breakpoint
UPDATE "events" e SET "sequence" = s.n FROM (SELECT id, row_number() OVER (PARTITION BY resource_id ORDER BY id) AS n FROM "events") s WHERE s.id = e.id;--> statement-breakpoint
INSERT INTO "event_sequences" ("resource_id", "last_sequence") SELECT "resource_id", max("sequence") FROM "events" GROUP BY "resource_id";--> statement-breakpoint
ALTER TABLE "events" ALTER COLUMN "resource_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "events" ALTER COLUMN "sequence" SET NOT NULL;
