CREATE TYPE "public"."movement_reason" AS ENUM('received', 'correction', 'cycle_count', 'damaged', 'shrinkage', 'other', 'initial', 'safety_stock', 'transfer', 'reserved', 'reservation_released', 'committed', 'order_released', 'reallocated', 'fulfilled', 'returned');--> statement-breakpoint
CREATE TABLE "inventory_levels" (
	"id" uuid PRIMARY KEY NOT NULL,
	"location_id" uuid NOT NULL,
	"product_id" uuid NOT NULL,
	"variant_id" uuid,
	"item_id" uuid GENERATED ALWAYS AS (coalesce(variant_id, product_id)) STORED NOT NULL,
	"on_hand" integer DEFAULT 0 NOT NULL,
	"reserved" integer DEFAULT 0 NOT NULL,
	"committed" integer DEFAULT 0 NOT NULL,
	"safety_stock" integer DEFAULT 0 NOT NULL,
	"low_stock_threshold" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "inventory_levels_quantities_nonnegative" CHECK ("inventory_levels"."on_hand" >= 0 and "inventory_levels"."reserved" >= 0 and "inventory_levels"."committed" >= 0 and "inventory_levels"."safety_stock" >= 0),
	CONSTRAINT "inventory_levels_threshold_nonnegative" CHECK ("inventory_levels"."low_stock_threshold" >= 0)
);
--> statement-breakpoint
CREATE TABLE "inventory_movements" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "inventory_movements_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"level_id" uuid NOT NULL,
	"on_hand_delta" integer DEFAULT 0 NOT NULL,
	"reserved_delta" integer DEFAULT 0 NOT NULL,
	"committed_delta" integer DEFAULT 0 NOT NULL,
	"safety_stock_delta" integer DEFAULT 0 NOT NULL,
	"reason" "movement_reason" NOT NULL,
	"note" text,
	"order_id" uuid,
	"reference_id" uuid,
	"actor" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "stock_locations" (
	"id" uuid PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"address" jsonb,
	"priority" integer DEFAULT 0 NOT NULL,
	"is_active" boolean DEFAULT true NOT NULL,
	"is_default" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "order_item_allocations" (
	"order_item_id" uuid NOT NULL,
	"location_id" uuid NOT NULL,
	"quantity" integer NOT NULL,
	CONSTRAINT "order_item_allocations_pkey" PRIMARY KEY("order_item_id","location_id"),
	CONSTRAINT "order_item_allocations_quantity_nonnegative" CHECK ("order_item_allocations"."quantity" >= 0)
);
--> statement-breakpoint
ALTER TABLE "fulfillments" ADD COLUMN "location_id" uuid;--> statement-breakpoint
ALTER TABLE "inventory_levels" ADD CONSTRAINT "inventory_levels_location_id_stock_locations_id_fk" FOREIGN KEY ("location_id") REFERENCES "public"."stock_locations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "inventory_levels" ADD CONSTRAINT "inventory_levels_product_id_products_id_fk" FOREIGN KEY ("product_id") REFERENCES "public"."products"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "inventory_levels" ADD CONSTRAINT "inventory_levels_variant_id_product_variants_id_fk" FOREIGN KEY ("variant_id") REFERENCES "public"."product_variants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "inventory_movements" ADD CONSTRAINT "inventory_movements_level_id_inventory_levels_id_fk" FOREIGN KEY ("level_id") REFERENCES "public"."inventory_levels"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "order_item_allocations" ADD CONSTRAINT "order_item_allocations_order_item_id_order_items_id_fk" FOREIGN KEY ("order_item_id") REFERENCES "public"."order_items"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "order_item_allocations" ADD CONSTRAINT "order_item_allocations_location_id_stock_locations_id_fk" FOREIGN KEY ("location_id") REFERENCES "public"."stock_locations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "inventory_levels_item_location_key" ON "inventory_levels" USING btree ("item_id","location_id");--> statement-breakpoint
CREATE INDEX "inventory_levels_location_idx" ON "inventory_levels" USING btree ("location_id");--> statement-breakpoint
CREATE INDEX "inventory_levels_product_idx" ON "inventory_levels" USING btree ("product_id");--> statement-breakpoint
CREATE INDEX "inventory_movements_level_idx" ON "inventory_movements" USING btree ("level_id","id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "inventory_movements_order_idx" ON "inventory_movements" USING btree ("order_id");--> statement-breakpoint
CREATE UNIQUE INDEX "stock_locations_default_key" ON "stock_locations" USING btree ("is_default") WHERE "stock_locations"."is_default";--> statement-breakpoint
CREATE UNIQUE INDEX "stock_locations_name_key" ON "stock_locations" USING btree (lower("name"));--> statement-breakpoint
ALTER TABLE "fulfillments" ADD CONSTRAINT "fulfillments_location_id_stock_locations_id_fk" FOREIGN KEY ("location_id") REFERENCES "public"."stock_locations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
-- Today's stock moves into one default location: what is sellable stays inventory_quantity, and
-- the units of held checkouts (reserved) and of open orders not shipped yet (committed) are on
-- hand there too. Each level starts with one 'initial' movement, so it is the sum of its log.
INSERT INTO "stock_locations" ("id", "name", "priority", "is_default") VALUES (gen_random_uuid(), 'Default', 0, true);--> statement-breakpoint
WITH "items" AS (
  SELECT p."id" AS "product_id", NULL::uuid AS "variant_id", p."id" AS "item_id", p."inventory_quantity" FROM "products" p
  UNION ALL
  SELECT v."product_id", v."id", v."id", v."inventory_quantity" FROM "product_variants" v
),
"held" AS (
  SELECT (s->>'id')::uuid AS "item_id", sum((s->>'quantity')::int) AS "units"
  FROM "checkout_reservations" r, jsonb_array_elements(r."stock") s
  WHERE r."status" = 'held' GROUP BY 1
),
"promised" AS (
  SELECT coalesce(i."variant_id", i."product_id") AS "item_id", sum(i."quantity" - i."canceled_quantity" - i."fulfilled_quantity") AS "units"
  FROM "order_items" i JOIN "orders" o ON o."id" = i."order_id"
  WHERE o."status" IN ('pending', 'paid', 'shipped') AND i."quantity" - i."canceled_quantity" - i."fulfilled_quantity" > 0
  GROUP BY 1
)
INSERT INTO "inventory_levels" ("id", "location_id", "product_id", "variant_id", "on_hand", "reserved", "committed")
SELECT gen_random_uuid(), l."id", it."product_id", it."variant_id",
  it."inventory_quantity" + coalesce(h."units", 0) + coalesce(pr."units", 0), coalesce(h."units", 0), coalesce(pr."units", 0)
FROM "items" it CROSS JOIN "stock_locations" l
LEFT JOIN "held" h ON h."item_id" = it."item_id" LEFT JOIN "promised" pr ON pr."item_id" = it."item_id"
WHERE l."is_default";--> statement-breakpoint
INSERT INTO "inventory_movements" ("level_id", "on_hand_delta", "reserved_delta", "committed_delta", "reason")
SELECT "id", "on_hand", "reserved", "committed", 'initial' FROM "inventory_levels" WHERE "on_hand" <> 0 OR "reserved" <> 0 OR "committed" <> 0;--> statement-breakpoint
INSERT INTO "order_item_allocations" ("order_item_id", "location_id", "quantity")
SELECT i."id", l."id", i."quantity" - i."canceled_quantity" - i."fulfilled_quantity"
FROM "order_items" i JOIN "orders" o ON o."id" = i."order_id" CROSS JOIN "stock_locations" l
WHERE l."is_default" AND o."status" IN ('pending', 'paid', 'shipped') AND i."quantity" - i."canceled_quantity" - i."fulfilled_quantity" > 0
  AND EXISTS (SELECT FROM "inventory_levels" lv WHERE lv."item_id" = coalesce(i."variant_id", i."product_id"));--> statement-breakpoint
-- A reservation's stock becomes one entry per order line and location (ReservedStock).
UPDATE "checkout_reservations" r SET "stock" = coalesce((
  SELECT jsonb_agg(jsonb_build_object('id', s->'id', 'variant', s->'variant', 'location', l."id", 'quantity', s->'quantity',
    'line', (SELECT i->>'id' FROM json_array_elements(r."placement"->'items') i WHERE coalesce(i->>'variant_id', i->>'product_id') = s->>'id' LIMIT 1)))
  FROM jsonb_array_elements(r."stock") s CROSS JOIN "stock_locations" l WHERE l."is_default"), '[]'::jsonb);--> statement-breakpoint
-- Every new product and variant gets its level at the default location, whatever inserts it: once
-- per statement, so a bulk insert (an import, a seed) makes its levels in one insert.
CREATE FUNCTION "inventory_levels_of_new_items"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'products' THEN
    WITH "made" AS (
      INSERT INTO "inventory_levels" ("id", "location_id", "product_id", "variant_id", "on_hand")
      SELECT gen_random_uuid(), l."id", n."id", NULL, n."inventory_quantity" FROM "new_items" n CROSS JOIN "stock_locations" l WHERE l."is_default"
      RETURNING "id", "on_hand")
    INSERT INTO "inventory_movements" ("level_id", "on_hand_delta", "reason") SELECT "id", "on_hand", 'initial' FROM "made" WHERE "on_hand" <> 0;
  ELSE
    WITH "made" AS (
      INSERT INTO "inventory_levels" ("id", "location_id", "product_id", "variant_id", "on_hand")
      SELECT gen_random_uuid(), l."id", n."product_id", n."id", n."inventory_quantity" FROM "new_items" n CROSS JOIN "stock_locations" l WHERE l."is_default"
      RETURNING "id", "on_hand")
    INSERT INTO "inventory_movements" ("level_id", "on_hand_delta", "reason") SELECT "id", "on_hand", 'initial' FROM "made" WHERE "on_hand" <> 0;
  END IF;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "products_inventory_levels" AFTER INSERT ON "products" REFERENCING NEW TABLE AS "new_items" FOR EACH STATEMENT EXECUTE FUNCTION "inventory_levels_of_new_items"();--> statement-breakpoint
CREATE TRIGGER "product_variants_inventory_levels" AFTER INSERT ON "product_variants" REFERENCING NEW TABLE AS "new_items" FOR EACH STATEMENT EXECUTE FUNCTION "inventory_levels_of_new_items"();
