-- A bulk load or an import's batch that holds the listing's triggers back (commerce.defer_listing,
-- refreshingListingOnce, bench/seed.js) holds the stored list items' back too, and writes them once
-- for its products with refresh_product_list_items: a product's row is written several times as a
-- batch fills it in (its categories, options, picture), and each write would make its item again.
CREATE OR REPLACE FUNCTION "products_write_list_item"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('commerce.defer_listing', true) = 'on' THEN RETURN NULL; END IF;
  INSERT INTO product_list_items (product_id, body) VALUES (NEW.id, product_list_item_body(NEW))
  ON CONFLICT (product_id) DO UPDATE SET body = excluded.body;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE FUNCTION "refresh_product_list_items"(ids uuid[]) RETURNS void LANGUAGE sql AS $$
  INSERT INTO product_list_items (product_id, body) SELECT p.id, product_list_item_body(p) FROM products p WHERE p.id = ANY(ids)
  ON CONFLICT (product_id) DO UPDATE SET body = excluded.body
$$;
