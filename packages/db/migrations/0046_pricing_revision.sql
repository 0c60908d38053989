CREATE TABLE "pricing_revision" (
	"singleton" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"revision" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
INSERT INTO "pricing_revision" ("singleton", "revision") VALUES (true, 0) ON CONFLICT DO NOTHING;
--> statement-breakpoint
-- Each API instance prices carts with the price lists, automatic promotions and campaigns it keeps
-- in memory (apps/api plugins/pricing-rules.ts): a write to them bumps the revision, which the
-- instances check now and then, and says so at once to those listening. The use counts and
-- budgets a checkout moves (times_used, budget_used) are left out: a cart reads them live, and
-- checkouts do not contend on this row.
CREATE FUNCTION "bump_pricing_revision"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  now_revision bigint;
BEGIN
  UPDATE "pricing_revision" SET "revision" = "revision" + 1 WHERE "singleton" RETURNING "revision" INTO now_revision;
  PERFORM pg_notify('commerce_pricing', now_revision::text);
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "price_lists_bump_pricing_revision"
  AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON "price_lists"
  FOR EACH STATEMENT EXECUTE FUNCTION "bump_pricing_revision"();
--> statement-breakpoint
CREATE TRIGGER "promotions_bump_pricing_revision"
  AFTER INSERT OR DELETE OR TRUNCATE ON "promotions"
  FOR EACH STATEMENT EXECUTE FUNCTION "bump_pricing_revision"();
--> statement-breakpoint
CREATE TRIGGER "promotions_bump_pricing_revision_on_update"
  AFTER UPDATE OF "code", "name", "description", "type", "percent_off_ppm", "amount_off_minor", "currency", "min_subtotal_minor",
  "starts_at", "ends_at", "usage_limit", "is_active", "stacking", "condition_product_ids", "condition_category_ids", "customer_group_ids",
  "target_product_ids", "target_category_ids", "buy_quantity", "get_quantity", "max_applications", "per_customer_limit", "campaign_id" ON "promotions"
  FOR EACH STATEMENT EXECUTE FUNCTION "bump_pricing_revision"();
--> statement-breakpoint
CREATE TRIGGER "campaigns_bump_pricing_revision"
  AFTER INSERT OR DELETE OR TRUNCATE ON "campaigns"
  FOR EACH STATEMENT EXECUTE FUNCTION "bump_pricing_revision"();
--> statement-breakpoint
CREATE TRIGGER "campaigns_bump_pricing_revision_on_update"
  AFTER UPDATE OF "name", "description", "budget_type", "budget_limit", "currency", "starts_at", "ends_at" ON "campaigns"
  FOR EACH STATEMENT EXECUTE FUNCTION "bump_pricing_revision"();
