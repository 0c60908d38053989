DROP INDEX "prices_price_list_idx";--> statement-breakpoint
DROP INDEX "customer_addresses_customer_idx";--> statement-breakpoint
DROP INDEX "customer_group_members_group_idx";--> statement-breakpoint
DROP INDEX "product_images_product_idx";--> statement-breakpoint
DROP INDEX "product_variants_product_idx";--> statement-breakpoint
DROP INDEX "inventory_levels_product_idx";--> statement-breakpoint
DROP INDEX "fulfillments_order_idx";--> statement-breakpoint
DROP INDEX "order_edits_order_idx";--> statement-breakpoint
DROP INDEX "payments_order_idx";--> statement-breakpoint
DROP INDEX "returns_order_idx";--> statement-breakpoint
DROP INDEX "webhook_deliveries_webhook_created_idx";--> statement-breakpoint
CREATE INDEX "stock_locations_priority_idx" ON "stock_locations" USING btree ("priority","id");--> statement-breakpoint
CREATE INDEX "campaigns_created_idx" ON "campaigns" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "price_lists_created_idx" ON "price_lists" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "prices_list_idx" ON "prices" USING btree ("price_list_id","product_id",coalesce("variant_id", '00000000-0000-0000-0000-000000000000'::uuid),"currency","min_quantity","id");--> statement-breakpoint
CREATE INDEX "promotions_created_idx" ON "promotions" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "shipping_methods_name_idx" ON "shipping_methods" USING btree (lower("name"),"name","id");--> statement-breakpoint
CREATE INDEX "tax_rates_list_idx" ON "tax_rates" USING btree ("country",coalesce(lower("region"), ''),coalesce("region", ''),"id");--> statement-breakpoint
CREATE INDEX "promotion_usages_promotion_idx" ON "promotion_usages" USING btree ("promotion_id","created_at","id");--> statement-breakpoint
CREATE INDEX "webhooks_created_idx" ON "webhooks" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "customer_addresses_customer_idx" ON "customer_addresses" USING btree ("customer_id","created_at","id");--> statement-breakpoint
CREATE INDEX "customer_group_members_group_idx" ON "customer_group_members" USING btree ("group_id","customer_id");--> statement-breakpoint
CREATE INDEX "product_images_product_idx" ON "product_images" USING btree ("product_id","position","id");--> statement-breakpoint
CREATE INDEX "product_variants_product_idx" ON "product_variants" USING btree ("product_id","id");--> statement-breakpoint
CREATE INDEX "inventory_levels_product_idx" ON "inventory_levels" USING btree ("product_id",coalesce("variant_id", '00000000-0000-0000-0000-000000000000'::uuid));--> statement-breakpoint
CREATE INDEX "fulfillments_order_idx" ON "fulfillments" USING btree ("order_id","id");--> statement-breakpoint
CREATE INDEX "order_edits_order_idx" ON "order_edits" USING btree ("order_id","id");--> statement-breakpoint
CREATE INDEX "payments_order_idx" ON "payments" USING btree ("order_id","id");--> statement-breakpoint
CREATE INDEX "returns_order_idx" ON "returns" USING btree ("order_id","id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_webhook_created_idx" ON "webhook_deliveries" USING btree ("webhook_id","created_at","id");