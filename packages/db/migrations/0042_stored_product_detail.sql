-- A variant as the public detail shows it (toVariant for the public, not localized): its own
-- prices (null: the product's apply), on sale by the prices that apply. One expression, so that
-- it is inlined into the detail's statement; the product's prices as values, not its whole row,
-- which would be built for every variant.
CREATE FUNCTION "variant_item"(v product_variants, currency text, product_price bigint, product_compare_at bigint) RETURNS json LANGUAGE sql STABLE AS $$
  SELECT json_build_object(
    'id', v.id, 'product_id', v.product_id, 'title', v.title, 'sku', v.sku,
    'price', major_units(v.price_minor, currency),
    'compare_at_price', major_units(v.compare_at_price_minor, currency),
    'on_sale', coalesce(coalesce(v.compare_at_price_minor, product_compare_at) > coalesce(v.price_minor, product_price), false),
    'barcode', v.barcode, 'inventory_quantity', v.inventory_quantity, 'options', v.options, 'attributes', v.attributes,
    'weight', trim_scale(v.weight), 'weight_unit', v.weight_unit,
    'created_at', iso_time(v.created_at), 'updated_at', iso_time(v.updated_at))
$$;
--> statement-breakpoint
-- An image as the API shows it (toImage).
CREATE FUNCTION "image_item"(i product_images) RETURNS json LANGUAGE sql STABLE AS $$
  SELECT row_to_json(item) FROM (SELECT
    i.id, i.product_id, i.url, i.alt, i.position, i.content_type, i.size_bytes AS size, i.width, i.height,
    (SELECT coalesce(json_agg((SELECT row_to_json(th) FROM (SELECT t -> 'width' AS width, t -> 'height' AS height, t -> 'url' AS url) th) ORDER BY n), '[]')
     FROM jsonb_array_elements(i.thumbnails) WITH ORDINALITY AS ts (t, n)) AS thumbnails,
    iso_time(i.created_at) AS created_at
  ) item
$$;
