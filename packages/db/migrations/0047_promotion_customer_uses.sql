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
