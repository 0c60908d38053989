/** Draft orders (an admin's quote for a customer), their payment link, and what the link shows the payer. */
import { Type, type Static } from 'typebox'
import { ACCOUNT_TOKEN } from '../account-tokens.js'
import { DRAFT_ORDER_STATUSES, MAX_CART_LINES, MAX_LINE_QUANTITY } from '../constants.js'
import { Address, AddressInput } from './addresses.js'
import { Totals } from './carts.js'
import { Currency, Nullable, PageOrCursorMeta, PaginationQuery, Timestamp, Uuid } from './common.js'
import { CreatePayment, Money } from './orders.js'

const Email = Type.String({ format: 'email', maxLength: 254 })
const Notes = Nullable(Type.String({ maxLength: 5000 }))

export const DraftOrderStatusSchema = Type.Enum(DRAFT_ORDER_STATUSES, {
  description: 'open (being prepared), invoice_sent (its payment link was sent), completed (made into the order `order_id`)',
})

const DraftLineInput = Type.Object(
  {
    product_id: Uuid,
    variant_id: Type.Optional(Nullable(Uuid)),
    quantity: Type.Integer({ minimum: 1, maximum: MAX_LINE_QUANTITY }),
  },
  { additionalProperties: false, title: 'DraftOrderLineInput', description: 'A product (or one of its variants) and how many' },
)

const DraftLines = Type.Array(DraftLineInput, {
  minItems: 1,
  maxItems: MAX_CART_LINES,
  description:
    'The lines, replacing those the draft had. A line of a product (and variant) the draft already has keeps the price, ' +
    'title and sku it was given then; a new one is priced from the catalog now',
})

export const DraftDiscountInput = Type.Object(
  {
    type: Type.Enum(['percentage', 'fixed_amount'] as const),
    value: Type.Number({
      exclusiveMinimum: 0,
      description: 'percentage: the percent off (up to 100, at most 4 decimals); fixed_amount: the amount off in the draft’s currency',
    }),
    reason: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
  },
  {
    additionalProperties: false,
    title: 'DraftOrderDiscountInput',
    description: 'A discount the admin gives on the whole draft: shared over the lines before tax, as a coupon would be',
  },
)
export type DraftDiscountInput = Static<typeof DraftDiscountInput>

export const CreateDraftOrder = Type.Object(
  {
    customer_id: Type.Optional(Nullable(Uuid)),
    email: Type.Optional(Nullable(Email)),
    currency: Currency,
    lines: DraftLines,
    discount: Type.Optional(Nullable(DraftDiscountInput)),
    shipping_address: Type.Optional(Nullable(AddressInput)),
    billing_address: Type.Optional(Nullable(AddressInput)),
    shipping_method_id: Type.Optional(Nullable(Uuid)),
    notes: Type.Optional(Notes),
  },
  { additionalProperties: false, title: 'CreateDraftOrderRequest' },
)
export type CreateDraftOrder = Static<typeof CreateDraftOrder>

export const UpdateDraftOrder = Type.Object(
  {
    customer_id: Type.Optional(Nullable(Uuid)),
    email: Type.Optional(Nullable(Email)),
    lines: Type.Optional(DraftLines),
    discount: Type.Optional(Nullable(DraftDiscountInput)),
    shipping_address: Type.Optional(Nullable(AddressInput)),
    billing_address: Type.Optional(Nullable(AddressInput)),
    shipping_method_id: Type.Optional(Nullable(Uuid)),
    notes: Type.Optional(Notes),
  },
  { additionalProperties: false, minProperties: 1, title: 'UpdateDraftOrderRequest' },
)
export type UpdateDraftOrder = Static<typeof UpdateDraftOrder>

export const DraftOrderLine = Type.Object(
  {
    product_id: Uuid,
    variant_id: Nullable(Uuid),
    title: Type.String(),
    variant_title: Nullable(Type.String()),
    sku: Nullable(Type.String()),
    quantity: Type.Integer(),
    unit_price: Money,
    line_total: Money,
    discount: Money,
    tax: Money,
    total: Money,
  },
  { title: 'DraftOrderLine', description: 'A line of a draft, priced when it was added: the order made from the draft keeps that price' },
)

export const DraftOrder = Type.Object(
  {
    id: Uuid,
    status: DraftOrderStatusSchema,
    customer_id: Nullable(Uuid),
    email: Nullable(Type.String({ description: 'Where the order’s mail goes; required to complete the draft' })),
    currency: Type.String(),
    lines: Type.Array(DraftOrderLine),
    discount: Nullable(
      Type.Object(
        {
          type: Type.Enum(['percentage', 'fixed_amount'] as const),
          value: Type.Number({ description: 'As given: the percent off, or the amount off in major units' }),
          reason: Nullable(Type.String()),
          amount: Money,
        },
        { title: 'DraftOrderDiscount', description: 'The admin’s discount and what it takes off (`amount`, never more than the lines)' },
      ),
    ),
    shipping_address: Nullable(Address),
    billing_address: Nullable(Address),
    shipping_method: Nullable(
      Type.Object(
        { id: Uuid, name: Type.String(), amount: Money },
        { title: 'DraftOrderShippingMethod', description: 'How the order will ship and what shipping costs' },
      ),
    ),
    totals: Totals,
    notes: Nullable(Type.String()),
    order_id: Nullable(Uuid),
    invoice_sent_at: Nullable(Timestamp),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'DraftOrder', description: 'An order an admin prepares for a customer: no stock is taken and no order exists until it is completed' },
)
export type DraftOrder = Static<typeof DraftOrder>

export const DraftOrderInvoice = Type.Object(
  {
    ...DraftOrder.properties,
    invoice_url: Type.String({
      format: 'uri',
      description: 'The payment link: `<SHOP_URL>/invoices/<token>`. Only this answer (and its event) carry it; sending again replaces it',
    }),
  },
  { title: 'DraftOrderInvoice', description: 'The draft with the payment link just made for it' },
)
export type DraftOrderInvoice = Static<typeof DraftOrderInvoice>

export const DraftOrderList = Type.Object(
  { draft_orders: Type.Array(DraftOrder), meta: PageOrCursorMeta },
  { title: 'DraftOrderList', description: 'A page of draft orders, newest first' },
)
export type DraftOrderList = Static<typeof DraftOrderList>

export const ListDraftOrdersQuery = Type.Object({
  ...PaginationQuery.properties,
  status: Type.Optional(DraftOrderStatusSchema),
})
export type ListDraftOrdersQuery = Static<typeof ListDraftOrdersQuery>

export const CompleteDraftOrder = Type.Object(
  {
    mark_paid: Type.Optional(
      Type.Boolean({
        default: false,
        description: 'The customer paid outside the payment provider (cash, bank transfer): record a `manual` payment of the total; the order is paid',
      }),
    ),
  },
  { additionalProperties: false, title: 'CompleteDraftOrderRequest' },
)
export type CompleteDraftOrder = Static<typeof CompleteDraftOrder>

const InvoiceToken = Type.String({
  pattern: ACCOUNT_TOKEN.source,
  maxLength: 43,
  description: 'The token of the payment link (the last part of `invoice_url`): sent in the body, never in a URL, so no log or proxy keeps it',
})

export const LookUpInvoice = Type.Object({ invoice_token: InvoiceToken }, { additionalProperties: false, title: 'LookUpInvoiceRequest' })
export type LookUpInvoice = Static<typeof LookUpInvoice>

export const PayInvoice = Type.Object(
  { invoice_token: InvoiceToken, ...CreatePayment.properties },
  { additionalProperties: false, title: 'PayInvoiceRequest' },
)
export type PayInvoice = Static<typeof PayInvoice>

export const Invoice = Type.Object(
  {
    status: Type.Enum(['open', 'paid', 'closed'] as const, {
      description: 'open: `amount_due` is to be paid; paid: nothing is owed; closed: its order was cancelled or refunded',
    }),
    currency: Type.String(),
    lines: Type.Array(
      Type.Object(
        { title: Type.String(), variant_title: Nullable(Type.String()), quantity: Type.Integer(), unit_price: Money, total: Money },
        { title: 'InvoiceLine' },
      ),
    ),
    totals: Totals,
    amount_due: Money,
    order_number: Nullable(Type.String({ description: 'Once the draft became an order' })),
  },
  { title: 'Invoice', description: 'What a payment link asks to pay: the lines and the totals, nothing of the customer' },
)
export type Invoice = Static<typeof Invoice>
