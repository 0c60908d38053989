/** The route table: every area and the prefix it lives under. */
import type { FastifyInstance } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { onStockMoved, sqlOf } from '@commerce/db'
import type { Config } from '../config.js'
import { attributeRoutes } from './attributes/routes.js'
import { authRoutes } from './auth/routes.js'
import { cartRoutes } from './carts/routes.js'
import { categoryRoutes } from './categories/routes.js'
import { checkoutRoutes } from './checkouts/routes.js'
import { collectionRoutes } from './collections/routes.js'
import { customerGroupRoutes } from './customer-groups/routes.js'
import { exportRoutes, importRoutes } from './csv/routes.js'
import { customerRoutes } from './customers/routes.js'
import { draftOrderRoutes } from './draft-orders/routes.js'
import { eventRoutes } from './events/routes.js'
import { fulfillmentRoutes } from './fulfillments/routes.js'
import { inventoryRoutes } from './inventory/routes.js'
import { couponRoutes } from './coupons/routes.js'
import { promotionRoutes } from './promotions/routes.js'
import { campaignRoutes } from './campaigns/routes.js'
import { shippingMethodRoutes } from './shipping/methods.js'
import { taxRateRoutes } from './tax-rates/routes.js'
import { notificationRoutes } from './notifications/routes.js'
import { oauthRoutes } from './oauth/routes.js'
import { orderRoutes } from './orders/routes.js'
import { priceListRoutes } from './price-lists/routes.js'
import { productPriceRoutes } from './price-lists/product-prices.js'
import { paymentRoutes } from './payments/routes.js'
import { CatalogCache, clearOnWrite } from './products/catalog-cache.js'
import { productRoutes, uploadRoutes } from './products/routes.js'
import { pageIds, type ProductPage } from './products/page.js'
import type { ProductDetail, PublicDetail } from './products/service.js'
import { returnRoutes } from './returns/routes.js'
import { shippingRateRoutes } from './shipping/rates.js'
import { systemRoutes } from './system/routes.js'
import { translationRoutes } from './translations/routes.js'
import { userRoutes } from './users/routes.js'
import { webhookRoutes } from './webhooks/routes.js'
import { wsRoutes } from './ws/routes.js'

export async function registerRoutes(app: FastifyInstance, config: Config): Promise<void> {
  // Product details and list pages in memory (catalog-cache.ts). A catalog write (the areas
  // registered with `changingCatalog`) empties them: it may change which products a page holds,
  // their order and the totals. A stock move this instance commits, through whatever route (a
  // checkout, its payment's webhook, an order, an edit, a return, the inventory), changes only what
  // the answers showing its products say: those are dropped, the rest stays warm.
  const caches = {
    details: new CatalogCache<ProductDetail>(
      config.productCacheTtlMs,
      ({ product }) => 1 + product.variants.length + product.images.length,
      ({ product }) => [product.id],
    ),
    publicDetails: new CatalogCache<PublicDetail>(
      config.productCacheTtlMs,
      () => 1,
      ({ id }) => [id],
    ),
    pages: new CatalogCache<ProductPage>(
      config.productCacheTtlMs,
      (page) => 1 + pageIds(page).length,
      pageIds,
    ),
  }
  onStockMoved(sqlOf(app.db), (productIds) => {
    caches.details.forget(productIds)
    caches.publicDetails.forget(productIds)
    caches.pages.forget(productIds)
  })
  const clearCaches = clearOnWrite(caches.details, caches.publicDetails, caches.pages)
  const changingCatalog = <Options extends object>(plugin: FastifyPluginAsyncTypebox<Options>, options: Options & { prefix: string }) =>
    app.register(async (area) => {
      area.addHook('onSend', clearCaches)
      await area.register(plugin, options)
    })
  await app.register(systemRoutes)
  await app.register(authRoutes, { prefix: '/api/v1/auth', config })
  await app.register(userRoutes, { prefix: '/api/v1/users' })
  await app.register(oauthRoutes, { prefix: '/api/v1/oauth' })
  await changingCatalog(productRoutes, { prefix: '/api/v1/products', config, caches })
  // The file of a presigned upload, when the storage is a disk (PUT /uploads/:id).
  await app.register(uploadRoutes, { prefix: '/api/v1/uploads', config })
  // A product's base prices (/products/:id/prices) live with the price lists.
  await app.register(productPriceRoutes, { prefix: '/api/v1/products' })
  await changingCatalog(categoryRoutes, { prefix: '/api/v1/categories' })
  await changingCatalog(attributeRoutes, { prefix: '/api/v1/attributes' })
  await changingCatalog(collectionRoutes, { prefix: '/api/v1/collections' })
  // Translations of products, variants and categories (/products/:id/translations, …).
  await changingCatalog(translationRoutes, { prefix: '/api/v1' })
  await app.register(cartRoutes, { prefix: '/api/v1/carts' })
  await app.register(checkoutRoutes, { prefix: '/api/v1/checkouts', config })
  await app.register(orderRoutes, { prefix: '/api/v1/orders' })
  // Payments, fulfillments and returns span two prefixes each (/orders/:id/payments, /payments/:id/refunds).
  await app.register(paymentRoutes, { prefix: '/api/v1', config })
  await app.register(fulfillmentRoutes, { prefix: '/api/v1' })
  await app.register(returnRoutes, { prefix: '/api/v1' })
  // Draft orders and their public payment links (/draft-orders, /invoices/…).
  await app.register(draftOrderRoutes, { prefix: '/api/v1', config })
  await app.register(shippingRateRoutes, { prefix: '/api/v1/shipping' })
  // Stock locations and inventory (/stock-locations, /inventory/…).
  await app.register(inventoryRoutes, { prefix: '/api/v1' })
  await app.register(couponRoutes, { prefix: '/api/v1/coupons' })
  await app.register(priceListRoutes, { prefix: '/api/v1/price-lists' })
  await app.register(promotionRoutes, { prefix: '/api/v1/promotions' })
  await app.register(campaignRoutes, { prefix: '/api/v1/campaigns' })
  await app.register(taxRateRoutes, { prefix: '/api/v1/tax-rates' })
  await app.register(shippingMethodRoutes, { prefix: '/api/v1/shipping' })
  await app.register(customerRoutes, { prefix: '/api/v1/customers' })
  await app.register(customerGroupRoutes, { prefix: '/api/v1/customer-groups' })
  // CSV files of products, customers and orders, made and read by the worker.
  await app.register(exportRoutes, { prefix: '/api/v1/exports', config })
  await app.register(importRoutes, { prefix: '/api/v1/imports', config })
  await app.register(webhookRoutes, { prefix: '/api/v1/webhooks', config })
  await app.register(eventRoutes, { prefix: '/api/v1/events' })
  await app.register(notificationRoutes, { prefix: '/api/v1/notifications' })
  await app.register(wsRoutes, { prefix: '/api/v1/ws', config })
}
