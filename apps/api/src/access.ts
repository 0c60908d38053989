/**
 * Who may call each route (DESIGN §4): the one table that plugins/access.ts applies to every
 * route, keyed `METHOD url` exactly as Fastify registers the route. A HEAD route that Fastify adds
 * for a GET shares the GET's entry. Startup fails on a route without an entry and on an entry
 * without a route.
 */
import type { SCOPE_ACTIONS, SCOPE_RESOURCES } from '@commerce/domain'

export type Scope = `${(typeof SCOPE_RESOURCES)[number]}:${(typeof SCOPE_ACTIONS)[number]}`

export type Access =
  | { readonly kind: 'public' }
  | { readonly kind: 'signed_in' }
  | { readonly kind: 'user' }
  | { readonly kind: 'scope'; readonly scope: Scope }
  | { readonly kind: 'scope_or_owner'; readonly scope: Scope }
  | { readonly kind: 'resource_scope'; readonly action: (typeof SCOPE_ACTIONS)[number] }

/** Anyone; a credential that is sent but bad is still refused with 401. */
export const PUBLIC: Access = { kind: 'public' }
/** Any valid credential: a user's JWT, an API key or an OAuth client's token. */
export const SIGNED_IN: Access = { kind: 'signed_in' }
/** A user's own account: a user's JWT; an API key or OAuth client, which has no account, gets 403. */
export const USER: Access = { kind: 'user' }
/** A credential holding the scope (an admin's JWT holds `*`); 401 without one, 403 without the scope. */
export const scope = (required: Scope): Access => ({ kind: 'scope', scope: required })
/**
 * Holders of the scope act on every record; a signed-in customer passes too and the handler limits
 * it to its own records (404 for anyone else's). A key or OAuth client without the scope gets 403.
 */
export const scopeOrOwner = (required: Scope): Access => ({ kind: 'scope_or_owner', scope: required })

/**
 * CSV exports and imports: the scope `<resource>:<action>` of the resource the request names
 * (products, customers, orders), which its handler checks (csv/routes.ts): the guard needs a
 * credential, and 403 comes from the handler once the body says the resource.
 */
export const resourceScope = (action: (typeof SCOPE_ACTIONS)[number]): Access => ({ kind: 'resource_scope', action })

/**
 * The preflight route @fastify/cors adds when CORS_ORIGINS is set: a browser sends no credential
 * with a preflight, and the CORS plugin answers it before any guard runs.
 */
/** Uploaded files served from this instance's disk (STORAGE=disk): anyone, as a CDN would serve them. */
export const FILES_ACCESS: Readonly<Record<string, Access>> = { 'GET /files/*': PUBLIC }

/** The admin dashboard's static files (its data comes from the API, which checks who asks). */
export const ADMIN_ACCESS: Readonly<Record<string, Access>> = { 'GET /admin': PUBLIC, 'GET /admin/assets/*': PUBLIC }

export const CORS_PREFLIGHT_ACCESS: Readonly<Record<string, Access>> = { 'OPTIONS *': PUBLIC }

export const ACCESS: Readonly<Record<string, Access>> = {
  // Probes and metrics: outside /api/v1, for the platform.
  'GET /health': PUBLIC,
  'GET /ready': PUBLIC,
  'GET /metrics': PUBLIC,

  // The API's description and its reference page (@fastify/swagger-ui's routes).
  'GET /api/v1/openapi.json': PUBLIC,
  'GET /docs': PUBLIC,
  'GET /docs/json': PUBLIC,
  'GET /docs/yaml': PUBLIC,
  'GET /docs/static/index.html': PUBLIC,
  'GET /docs/static/swagger-initializer.js': PUBLIC,
  'GET /docs/static/*': PUBLIC,

  'POST /api/v1/auth/register': PUBLIC,
  'POST /api/v1/auth/login': PUBLIC,
  // Anyone may ask: the answer is the same whether or not the account exists; the link's token is the credential.
  'POST /api/v1/auth/password-reset': PUBLIC,
  'POST /api/v1/auth/password-reset/confirm': PUBLIC,
  'POST /api/v1/auth/verify-email': PUBLIC,
  'POST /api/v1/auth/verify-email/resend': PUBLIC,
  'POST /api/v1/auth/email-change/confirm': PUBLIC,
  // The account's own routes: keys and clients have no user account (403).
  'POST /api/v1/auth/email-change': USER,
  'POST /api/v1/auth/password-change': USER,
  'GET /api/v1/auth/me': USER,
  // Accounts; making an admin also needs `*`, which the handler checks (403).
  'GET /api/v1/users': scope('users:read'),
  'GET /api/v1/users/:id': scope('users:read'),
  'PATCH /api/v1/users/:id': scope('users:write'),
  // The client authenticates itself with HTTP Basic or body credentials, checked by the handler.
  'POST /api/v1/oauth/token': PUBLIC,

  // The catalogue is public; `include_inactive` is checked by the handler (401/403).
  'GET /api/v1/products': PUBLIC,
  'POST /api/v1/products': scope('products:write'),
  'GET /api/v1/products/:id': PUBLIC,
  'GET /api/v1/products/by-slug/:slug': PUBLIC,
  'PATCH /api/v1/products/:id': scope('products:write'),
  'DELETE /api/v1/products/:id': scope('products:write'),
  'GET /api/v1/products/:id/variants': PUBLIC,
  'GET /api/v1/collections': PUBLIC,
  'GET /api/v1/collections/:id': PUBLIC,
  'GET /api/v1/collections/by-slug/:slug': PUBLIC,
  'POST /api/v1/collections': scope('products:write'),
  'POST /api/v1/collections/preview': scope('products:read'),
  'PATCH /api/v1/collections/:id': scope('products:write'),
  'DELETE /api/v1/collections/:id': scope('products:write'),
  'GET /api/v1/collections/:id/translations': scope('products:read'),
  'PUT /api/v1/collections/:id/translations/:locale': scope('products:write'),
  'DELETE /api/v1/collections/:id/translations/:locale': scope('products:write'),
  'GET /api/v1/attributes': scope('products:read'),
  'POST /api/v1/attributes': scope('products:write'),
  'GET /api/v1/attributes/:id': scope('products:read'),
  'PATCH /api/v1/attributes/:id': scope('products:write'),
  'DELETE /api/v1/attributes/:id': scope('products:write'),
  'POST /api/v1/products/:id/variants': scope('products:write'),
  'POST /api/v1/products/:id/variants/generate': scope('products:write'),
  'PATCH /api/v1/products/:id/variants/:variant_id': scope('products:write'),
  'DELETE /api/v1/products/:id/variants/:variant_id': scope('products:write'),
  'GET /api/v1/products/:id/images': PUBLIC,
  'POST /api/v1/products/:id/images': scope('products:write'),
  'POST /api/v1/products/:id/images/uploads': scope('products:write'),
  // The upload's own secret (Upload-Token) is the credential: a browser sends the file without the admin's.
  'PUT /api/v1/uploads/:id': PUBLIC,
  'PATCH /api/v1/products/:id/images/:image_id': scope('products:write'),
  'DELETE /api/v1/products/:id/images/:image_id': scope('products:write'),

  'GET /api/v1/categories': PUBLIC,
  'POST /api/v1/categories': scope('categories:write'),
  'GET /api/v1/categories/:id': PUBLIC,
  'PATCH /api/v1/categories/:id': scope('categories:write'),
  'DELETE /api/v1/categories/:id': scope('categories:write'),
  // Translations: what they say is public through ?locale=; managing them is the catalog's.
  'GET /api/v1/products/:id/translations': scope('products:read'),
  'GET /api/v1/products/:id/translations/:locale': scope('products:read'),
  'PUT /api/v1/products/:id/translations/:locale': scope('products:write'),
  'DELETE /api/v1/products/:id/translations/:locale': scope('products:write'),
  'GET /api/v1/products/:id/variants/:variant_id/translations': scope('products:read'),
  'GET /api/v1/products/:id/variants/:variant_id/translations/:locale': scope('products:read'),
  'PUT /api/v1/products/:id/variants/:variant_id/translations/:locale': scope('products:write'),
  'DELETE /api/v1/products/:id/variants/:variant_id/translations/:locale': scope('products:write'),
  'GET /api/v1/categories/:id/translations': scope('categories:read'),
  'GET /api/v1/categories/:id/translations/:locale': scope('categories:read'),
  'PUT /api/v1/categories/:id/translations/:locale': scope('categories:write'),
  'DELETE /api/v1/categories/:id/translations/:locale': scope('categories:write'),

  // Carts and checkouts are reachable by whoever holds the id (anonymous shoppers); a customer's
  // cart is its own, which the handlers check (404), and carts:* lets a caller see every cart.
  'POST /api/v1/carts': PUBLIC,
  'GET /api/v1/carts/:id': PUBLIC,
  'POST /api/v1/carts/:id/items': PUBLIC,
  'PATCH /api/v1/carts/:id/items/:item_id': PUBLIC,
  'DELETE /api/v1/carts/:id/items/:item_id': PUBLIC,
  'POST /api/v1/carts/:id/coupons': PUBLIC,
  'DELETE /api/v1/carts/:id/coupons/:coupon_id': PUBLIC,
  'PUT /api/v1/carts/:id/shipping-address': PUBLIC,
  'PUT /api/v1/carts/:id/email': PUBLIC,
  'POST /api/v1/checkouts': PUBLIC,
  'GET /api/v1/checkouts/:id': PUBLIC,
  'POST /api/v1/checkouts/:id/shipping': PUBLIC,
  'POST /api/v1/checkouts/:id/complete': PUBLIC,

  'GET /api/v1/orders': scopeOrOwner('orders:read'),
  'POST /api/v1/orders': scope('orders:write'),
  'GET /api/v1/orders/:id': scopeOrOwner('orders:read'),
  'PATCH /api/v1/orders/:id': scope('orders:write'),
  'DELETE /api/v1/orders/:id': scope('orders:write'),
  'POST /api/v1/orders/:id/cancel': scope('orders:write'),
  'POST /api/v1/orders/:id/complete': scope('orders:write'),
  'POST /api/v1/orders/:id/edits/preview': scope('orders:write'),
  'POST /api/v1/orders/:id/edits': scope('orders:write'),
  'GET /api/v1/orders/:id/edits': scopeOrOwner('orders:read'),
  // Who changed an order names staff accounts and keys: the shop's.
  'GET /api/v1/orders/:id/history': scope('orders:read'),
  'GET /api/v1/orders/:id/allocations': scope('orders:read'),
  // A customer pays its own orders.
  'POST /api/v1/orders/:id/payments': scopeOrOwner('payments:write'),
  'GET /api/v1/orders/:id/payments': scopeOrOwner('payments:read'),
  'POST /api/v1/payments/:id/refunds': scope('payments:write'),
  'POST /api/v1/payments/:id/refund': scope('payments:write'),
  'POST /api/v1/payments/:id/capture': scope('payments:write'),
  'POST /api/v1/payments/:id/cancel': scope('payments:write'),
  // The provider's notifications: no credential, their own signature (checked on the raw body).
  'POST /api/v1/payments/webhooks/:provider': PUBLIC,
  'POST /api/v1/orders/:id/fulfillments': scope('orders:write'),
  'GET /api/v1/orders/:id/fulfillments': scopeOrOwner('orders:read'),
  'POST /api/v1/fulfillments/:id/tracking-events': scope('shipping:write'),
  // A customer asks for and withdraws returns of its own orders; the shop decides on them.
  'POST /api/v1/orders/:id/returns': scopeOrOwner('orders:write'),
  'GET /api/v1/orders/:id/returns': scopeOrOwner('orders:read'),
  'GET /api/v1/returns': scopeOrOwner('orders:read'),
  'GET /api/v1/returns/:id': scopeOrOwner('orders:read'),
  'POST /api/v1/returns/:id/cancel': scopeOrOwner('orders:write'),
  'POST /api/v1/returns/:id/approve': scope('orders:write'),
  'POST /api/v1/returns/:id/decline': scope('orders:write'),
  'POST /api/v1/returns/:id/receive': scope('orders:write'),
  // Draft orders are the shop's; their payment link is public, its token the credential (it shows lines and totals only).
  'GET /api/v1/draft-orders': scope('orders:read'),
  'POST /api/v1/draft-orders': scope('orders:write'),
  'GET /api/v1/draft-orders/:id': scope('orders:read'),
  'PATCH /api/v1/draft-orders/:id': scope('orders:write'),
  'DELETE /api/v1/draft-orders/:id': scope('orders:write'),
  'POST /api/v1/draft-orders/:id/complete': scope('orders:write'),
  'POST /api/v1/draft-orders/:id/send-invoice': scope('orders:write'),
  'POST /api/v1/invoices/lookup': PUBLIC,
  'POST /api/v1/invoices/payments': PUBLIC,
  // Like a carrier's tracking page: the number is the secret, the answer holds no order data.
  'GET /api/v1/shipping/tracking/:tracking_number': PUBLIC,

  // Rates of a cart: as public as the cart (its id is the key).
  'GET /api/v1/shipping/rates': PUBLIC,
  'GET /api/v1/shipping/methods': scope('shipping:read'),
  'POST /api/v1/shipping/methods': scope('shipping:write'),
  'GET /api/v1/shipping/methods/:id': scope('shipping:read'),
  'PATCH /api/v1/shipping/methods/:id': scope('shipping:write'),
  'DELETE /api/v1/shipping/methods/:id': scope('shipping:write'),

  'GET /api/v1/stock-locations': scope('inventory:read'),
  'POST /api/v1/stock-locations': scope('inventory:write'),
  'GET /api/v1/stock-locations/:id': scope('inventory:read'),
  'PATCH /api/v1/stock-locations/:id': scope('inventory:write'),
  'DELETE /api/v1/stock-locations/:id': scope('inventory:write'),
  'GET /api/v1/inventory/levels': scope('inventory:read'),
  'PATCH /api/v1/inventory/levels/:id': scope('inventory:write'),
  'POST /api/v1/inventory/adjustments': scope('inventory:write'),
  'POST /api/v1/inventory/transfers': scope('inventory:write'),
  'GET /api/v1/inventory/movements': scope('inventory:read'),

  'GET /api/v1/coupons': scope('coupons:read'),
  'POST /api/v1/coupons': scope('coupons:write'),
  'GET /api/v1/coupons/:id': scope('coupons:read'),
  'PATCH /api/v1/coupons/:id': scope('coupons:write'),
  'DELETE /api/v1/coupons/:id': scope('coupons:write'),

  'GET /api/v1/price-lists': scope('pricing:read'),
  'POST /api/v1/price-lists': scope('pricing:write'),
  'GET /api/v1/price-lists/:id': scope('pricing:read'),
  'PATCH /api/v1/price-lists/:id': scope('pricing:write'),
  'DELETE /api/v1/price-lists/:id': scope('pricing:write'),
  'GET /api/v1/price-lists/:id/prices': scope('pricing:read'),
  'POST /api/v1/price-lists/:id/prices': scope('pricing:write'),
  'DELETE /api/v1/price-lists/:id/prices/:price_id': scope('pricing:write'),
  // A product's base prices are the shop's pricing, not its public catalogue.
  'GET /api/v1/products/:id/prices': scope('pricing:read'),
  'POST /api/v1/products/:id/prices': scope('pricing:write'),
  'DELETE /api/v1/products/:id/prices/:price_id': scope('pricing:write'),
  // Every promotion (coupons too, as the coupons API shows them under coupons:*) and their campaigns.
  'GET /api/v1/promotions': scope('promotions:read'),
  'POST /api/v1/promotions': scope('promotions:write'),
  'GET /api/v1/promotions/:id': scope('promotions:read'),
  'PATCH /api/v1/promotions/:id': scope('promotions:write'),
  'DELETE /api/v1/promotions/:id': scope('promotions:write'),
  'GET /api/v1/promotions/:id/usages': scope('promotions:read'),
  'GET /api/v1/campaigns': scope('promotions:read'),
  'POST /api/v1/campaigns': scope('promotions:write'),
  'GET /api/v1/campaigns/:id': scope('promotions:read'),
  'PATCH /api/v1/campaigns/:id': scope('promotions:write'),
  'DELETE /api/v1/campaigns/:id': scope('promotions:write'),

  'GET /api/v1/tax-rates': scope('tax-rates:read'),
  'POST /api/v1/tax-rates': scope('tax-rates:write'),
  'GET /api/v1/tax-rates/:id': scope('tax-rates:read'),
  'PATCH /api/v1/tax-rates/:id': scope('tax-rates:write'),
  'DELETE /api/v1/tax-rates/:id': scope('tax-rates:write'),

  'GET /api/v1/customers': scope('customers:read'),
  'POST /api/v1/customers': scope('customers:write'),
  'DELETE /api/v1/customers/:id': scope('customers:write'),
  // The caller's own record: any credential may ask; accounts without one (admins, keys) get 404.
  'GET /api/v1/customers/me': SIGNED_IN,
  'PATCH /api/v1/customers/me': SIGNED_IN,
  'GET /api/v1/customers/me/addresses': SIGNED_IN,
  'POST /api/v1/customers/me/addresses': SIGNED_IN,
  'GET /api/v1/customers/me/addresses/:address_id': SIGNED_IN,
  'PATCH /api/v1/customers/me/addresses/:address_id': SIGNED_IN,
  'DELETE /api/v1/customers/me/addresses/:address_id': SIGNED_IN,
  'GET /api/v1/customers/:id': scopeOrOwner('customers:read'),
  'PATCH /api/v1/customers/:id': scopeOrOwner('customers:write'),
  'GET /api/v1/customers/:id/addresses': scopeOrOwner('customers:read'),
  'POST /api/v1/customers/:id/addresses': scopeOrOwner('customers:write'),
  'GET /api/v1/customers/:id/addresses/:address_id': scopeOrOwner('customers:read'),
  'PATCH /api/v1/customers/:id/addresses/:address_id': scopeOrOwner('customers:write'),
  'DELETE /api/v1/customers/:id/addresses/:address_id': scopeOrOwner('customers:write'),

  // Customer groups are customers' (scopes.ts).
  'GET /api/v1/customer-groups': scope('customers:read'),
  'POST /api/v1/customer-groups': scope('customers:write'),
  'GET /api/v1/customer-groups/:id': scope('customers:read'),
  'PATCH /api/v1/customer-groups/:id': scope('customers:write'),
  'DELETE /api/v1/customer-groups/:id': scope('customers:write'),
  'GET /api/v1/customer-groups/:id/customers': scope('customers:read'),
  'POST /api/v1/customer-groups/:id/customers': scope('customers:write'),
  'DELETE /api/v1/customer-groups/:id/customers/:customer_id': scope('customers:write'),

  'POST /api/v1/exports': resourceScope('read'),
  'GET /api/v1/exports': resourceScope('read'),
  'GET /api/v1/exports/:id': resourceScope('read'),
  'GET /api/v1/exports/:id/file': resourceScope('read'),
  'DELETE /api/v1/exports/:id': resourceScope('read'),
  'POST /api/v1/imports': resourceScope('write'),
  'GET /api/v1/imports': resourceScope('write'),
  'GET /api/v1/imports/:id': resourceScope('write'),
  'GET /api/v1/imports/:id/rows': resourceScope('write'),
  'POST /api/v1/imports/:id/apply': resourceScope('write'),
  'DELETE /api/v1/imports/:id': resourceScope('write'),

  'GET /api/v1/webhooks': scope('webhooks:read'),
  'POST /api/v1/webhooks': scope('webhooks:write'),
  'GET /api/v1/webhooks/:id': scope('webhooks:read'),
  'PATCH /api/v1/webhooks/:id': scope('webhooks:write'),
  'DELETE /api/v1/webhooks/:id': scope('webhooks:write'),
  'POST /api/v1/webhooks/:id/rotate-secret': scope('webhooks:write'),
  'POST /api/v1/webhooks/:id/enable': scope('webhooks:write'),
  'POST /api/v1/webhooks/:id/replay': scope('webhooks:write'),
  'GET /api/v1/webhooks/:id/deliveries': scope('webhooks:read'),
  'GET /api/v1/webhooks/:id/deliveries/:delivery_id': scope('webhooks:read'),
  'POST /api/v1/webhooks/:id/deliveries/:delivery_id/redeliver': scope('webhooks:write'),

  'GET /api/v1/notifications': scope('notifications:read'),
  'GET /api/v1/notifications/settings': scope('notifications:read'),
  'PATCH /api/v1/notifications/settings': scope('notifications:write'),
  'GET /api/v1/notifications/:id': scope('notifications:read'),
  'POST /api/v1/notifications/:id/resend': scope('notifications:write'),

  'GET /api/v1/events': scope('events:read'),
  'GET /api/v1/events/:id': scope('events:read'),
  // Every signed-in caller may listen; what each one receives is decided per event (events:read: all).
  'GET /api/v1/ws': SIGNED_IN,
}
