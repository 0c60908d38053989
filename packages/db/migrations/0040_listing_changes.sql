CREATE TABLE "listing_changes" (
	"xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL,
	"product_id" uuid NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "listing_changes_xid_idx" ON "listing_changes" USING btree ("xid");--> statement-breakpoint
CREATE INDEX "listing_changes_at_idx" ON "listing_changes" USING btree ("at");--> statement-breakpoint
-- Every change of a listing row or a collection membership names its product here, in the
-- changing transaction (one statement-level insert per statement; transition tables need one
-- trigger per event).
CREATE FUNCTION "log_listing_changes"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    INSERT INTO listing_changes (product_id) SELECT DISTINCT product_id FROM old_rows;
  ELSE
    INSERT INTO listing_changes (product_id) SELECT DISTINCT product_id FROM new_rows;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "product_listing_log_insert" AFTER INSERT ON "product_listing" REFERENCING NEW TABLE AS "new_rows"
  FOR EACH STATEMENT EXECUTE FUNCTION "log_listing_changes"();
--> statement-breakpoint
CREATE TRIGGER "product_listing_log_update" AFTER UPDATE ON "product_listing" REFERENCING NEW TABLE AS "new_rows"
  FOR EACH STATEMENT EXECUTE FUNCTION "log_listing_changes"();
--> statement-breakpoint
CREATE TRIGGER "product_listing_log_delete" AFTER DELETE ON "product_listing" REFERENCING OLD TABLE AS "old_rows"
  FOR EACH STATEMENT EXECUTE FUNCTION "log_listing_changes"();
--> statement-breakpoint
CREATE TRIGGER "collection_products_log_insert" AFTER INSERT ON "collection_products" REFERENCING NEW TABLE AS "new_rows"
  FOR EACH STATEMENT EXECUTE FUNCTION "log_listing_changes"();
--> statement-breakpoint
CREATE TRIGGER "collection_products_log_update" AFTER UPDATE ON "collection_products" REFERENCING NEW TABLE AS "new_rows"
  FOR EACH STATEMENT EXECUTE FUNCTION "log_listing_changes"();
--> statement-breakpoint
CREATE TRIGGER "collection_products_log_delete" AFTER DELETE ON "collection_products" REFERENCING OLD TABLE AS "old_rows"
  FOR EACH STATEMENT EXECUTE FUNCTION "log_listing_changes"();
