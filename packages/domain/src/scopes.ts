/**
 * Scopes are `<resource>:<action>` (read, write); `write` implies `read` of the same resource,
 * a bare `read` grants every `:read`, and `*` grants everything.
 */
/**
 * DESIGN §4's resources, plus coupons, tax-rates, users (accounts: roles and disabling),
 * notifications (the customers' emails: their log, resends, settings) and inventory (stock
 * locations, levels, adjustments, transfers, the movement log), pricing (prices per currency and
 * price lists) and promotions (promotions and campaigns), which the API guards with their own
 * scopes. Customer groups are customers'.
 */
export const SCOPE_RESOURCES = [
  'products',
  'categories',
  'orders',
  'customers',
  'carts',
  'checkout',
  'payments',
  'shipping',
  'webhooks',
  'events',
  'coupons',
  'tax-rates',
  'users',
  'notifications',
  'inventory',
  'pricing',
  'promotions',
] as const
export const SCOPE_ACTIONS = ['read', 'write'] as const

const SCOPES: ReadonlySet<string> = new Set([
  '*',
  'read',
  ...SCOPE_RESOURCES.flatMap((resource) => SCOPE_ACTIONS.map((action) => `${resource}:${action}`)),
])

/** True for a scope a credential may hold (what `hasScope` understands). */
export function isScope(text: string): boolean {
  return SCOPES.has(text)
}

export function hasScope(granted: readonly string[], required: string): boolean {
  const [resource, action] = required.split(':')
  return granted.some(
    (scope) =>
      scope === '*' ||
      scope === required ||
      (action === 'read' && (scope === 'read' || scope === `${resource}:write`)),
  )
}
