CREATE TABLE "event_retention" (
	"singleton" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"swept_through" uuid NOT NULL,
	CONSTRAINT "event_retention_one_row" CHECK ("event_retention"."singleton")
);
