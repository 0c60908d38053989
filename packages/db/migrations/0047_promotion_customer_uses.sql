CREATE TABLE "promotion_customer_uses" (
	"promotion_id" uuid NOT NULL,
	"customer_key" text NOT NULL,
	"uses" integer NOT NULL,
	"use_limit" integer NOT NULL,
	CONSTRAINT "promotion_customer_uses_promotion_id_customer_key_pk" PRIMARY KEY("promotion_id","customer_key"),
	CONSTRAINT "promotion_customer_uses_within_limit" CHECK ("promotion_customer_uses"."uses" >= 0 and "promotion_customer_uses"."uses" <= "promotion_customer_uses"."use_limit")
);
--> statement-breakpoint
ALTER TABLE "promotion_customer_uses" ADD CONSTRAINT "promotion_customer_uses_promotion_id_promotions_id_fk" FOREIGN KEY ("promotion_id") REFERENCES "public"."promotions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- A promotion's per-customer limit changed (set, changed or removed): its counts are dropped and
-- made again from promotion_usages at each customer's next use (uses taken while it had no limit
-- were never counted here).
CREATE FUNCTION "forget_promotion_customer_uses"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM "promotion_customer_uses" WHERE "promotion_id" = NEW."id";
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "promotions_forget_customer_uses"
  AFTER UPDATE OF "per_customer_limit" ON "promotions"
  FOR EACH ROW WHEN (OLD."per_customer_limit" IS DISTINCT FROM NEW."per_customer_limit")
  EXECUTE FUNCTION "forget_promotion_customer_uses"();
--> statement-breakpoint
-- A promotion without a usage limit has its uses counted from promotion_usages, not on its row
-- (checkouts do not queue on it: checkout-reservation.ts, TAKE_USES); given a limit, its row
-- counts the uses held as the limit is set, and its checkouts count on from there. (The API
-- locks the row FOR UPDATE before it sets one, which waits for the checkouts still completing:
-- their uses' foreign key share-locks the row.)
CREATE FUNCTION "count_promotion_uses"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW."times_used" := (SELECT count(*) FROM "promotion_usages" u WHERE u."promotion_id" = NEW."id" AND u."released_at" IS NULL);
  RETURN NEW;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "promotions_count_uses_when_limited"
  BEFORE UPDATE OF "usage_limit" ON "promotions"
  FOR EACH ROW WHEN (OLD."usage_limit" IS NULL AND NEW."usage_limit" IS NOT NULL)
  EXECUTE FUNCTION "count_promotion_uses"();
