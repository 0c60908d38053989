/** Orders as the API writes them into its events, for the notification tests and benchmark. */
import type { EventKind, Order } from '@commerce/domain'
import type { NewEvent } from './outbox.js'
import { newId } from './schema/columns.js'

let orders = 0
/** An order as the API writes it into its events: three lines, a coupon, tax and shipping, in `currency`. */
export function sampleOrder(email: string, currency = 'EUR'): Order {
  orders += 1
  const id = newId()
  const couponId = newId()
  const item = (title: string, variant: string | null, quantity: number, unit: number, total: number) => ({
    id: newId(),
    product_id: newId(),
    variant_id: null,
    title,
    variant_title: variant,
    sku: null,
    quantity,
    fulfilled_quantity: 0,
    returned_quantity: 0,
    canceled_quantity: 0,
    unit_price: unit,
    line_total: total,
    discount: 0,
    tax: 0,
    total,
  })
  return {
    id,
    order_number: `10${orders}`,
    status: 'paid',
    payment_status: 'paid',
    fulfillment_status: 'unfulfilled',
    customer_id: null,
    email,
    currency,
    items: [item('Linen shirt', 'Blue / M', 2, 39.9, 79.8), item('Wool socks <3 pack>', null, 1, 12.5, 12.5), item('Canvas tote', null, 3, 7.05, 21.15)],
    shipping_address: { first_name: 'Ada', last_name: 'Lovelace', company: null, line1: '12 St James Sq', line2: null, city: 'London', region: null, postal_code: 'SW1Y 4JH', country: 'GB', phone: null },
    billing_address: null,
    shipping_method: { id: null, name: 'Courier', amount: 6.5 },
    coupons: [{ id: couponId, code: 'AUTUMN10', type: 'percentage', discount: 11.35 }],
    promotions: [{ id: couponId, code: 'AUTUMN10', name: 'AUTUMN10', type: 'percentage', discount: 11.35, shipping_discount: 0 }],
    totals: { subtotal: 113.45, discount: 11.35, tax: 20.42, shipping: 6.5, total: 129.02 },
    amount_paid: 129.02,
    amount_authorized: 0,
    amount_refunded: 0,
    amount_owed: 0,
    payments: [],
    fulfillments: [],
    notes: null,
    created_at: new Date().toISOString(),
    updated_at: new Date().toISOString(),
  }
}


/** An order.* event of `data`, with the order's id and total repeated as the API writes them. */
export function orderEvent(kind: EventKind, data: Order): NewEvent {
  return { kind, resourceId: data.id, data: { ...data, order_id: data.id, total: data.totals.total } }
}
