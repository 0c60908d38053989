/** An order's lines: pricing them from the catalog and the rows written for them (their stock: ../inventory/stock.ts). */
import { and, eq, sql } from 'drizzle-orm'
import { massOf, type LineTotals } from '@commerce/domain'
import { customerGroupMembers, newId, products, productVariants, readLinePrices, type Executor } from '@commerce/db'
import { ApiError, invalidField } from '../../errors.js'
import { linePrice } from '../carts/pricing.js'

/** A line of a new order: what it copies from the catalog at the time of sale. */
export interface NewOrderLine {
  productId: string
  variantId: string | null
  quantity: number
  title: string
  variantTitle: string | null
  sku: string | null
  unitPriceMinor: number
}

/** A line to sell, priced from the catalog now, with its weight for a shipping rate. */
export interface CatalogLine extends NewOrderLine {
  /** Its position in the request (`<field>[i]`). */
  id: string
  mass: bigint
}

/**
 * The lines of a request (`items`, or an edit's `add`) as the catalog sells them now, in the
 * order's currency: each at the price a cart line of that customer would pay (base prices and
 * quantity tiers in that currency, price lists for the customer's groups: docs/pricing.md). 400
 * naming `<field>[i]` for a product or variant not on sale, 409 currency_mismatch for one without
 * a price in that currency.
 */
export async function catalogLines(
  tx: Executor,
  items: readonly { product_id: string; variant_id?: string | null; quantity: number }[],
  order: { currency: string; customerId: string | null },
  field: string,
): Promise<CatalogLine[]> {
  const { currency } = order
  const now = new Date()
  const groups =
    order.customerId === null
      ? []
      : (await tx.select({ id: customerGroupMembers.groupId }).from(customerGroupMembers).where(eq(customerGroupMembers.customerId, order.customerId))).map(
          (group) => group.id,
        )
  const lines: CatalogLine[] = []
  for (const [index, item] of items.entries()) {
    const variantId = item.variant_id ?? null
    const [found] = await tx
      .select({ product: products, variant: productVariants })
      .from(products)
      .leftJoin(productVariants, and(eq(productVariants.id, sql`${variantId}::uuid`), eq(productVariants.productId, products.id)))
      .where(and(eq(products.id, item.product_id), eq(products.isActive, true)))
    if (!found || (variantId && !found.variant)) {
      throw invalidField(`${field}[${index}]`, `Field '${field}[${index}]' names no product or variant on sale`)
    }
    const variant = found.variant
    const prices = await readLinePrices(tx, { productId: item.product_id, variantId, currency })
    const price = linePrice(
      {
        prices,
        currency: found.product.currency,
        priceMinor: variant?.priceMinor ?? found.product.priceMinor,
        variantPriced: variant?.priceMinor != null,
        quantity: item.quantity,
      },
      currency,
      groups,
      now,
    )
    if (!price) {
      throw new ApiError('currency_mismatch', `'${found.product.title}' has no price in ${currency}, the order's currency`, [
        { field: `${field}[${index}].product_id`, message: `no price in ${currency}` },
      ])
    }
    const weight = variant?.weight ?? found.product.weight
    lines.push({
      id: String(index).padStart(4, '0'),
      productId: item.product_id,
      variantId,
      title: found.product.title,
      variantTitle: variant?.title ?? null,
      sku: variant?.sku ?? found.product.sku,
      quantity: item.quantity,
      unitPriceMinor: price.unitPriceMinor,
      mass: weight === null ? 0n : massOf(weight, variant?.weight != null ? variant.weightUnit : found.product.weightUnit),
    })
  }
  return lines
}

/** The rows of an order's lines, ids made now (`amounts[i]` belongs to `lines[i]`); ids ascend in line order. */
export function orderItemRows(orderId: string, lines: readonly NewOrderLine[], amounts: readonly LineTotals[]) {
  return lines.map((line, index) => ({
    id: newId(),
    orderId,
    productId: line.productId,
    variantId: line.variantId,
    title: line.title,
    variantTitle: line.variantTitle,
    sku: line.sku,
    quantity: line.quantity,
    fulfilledQuantity: 0,
    returnedQuantity: 0,
    canceledQuantity: 0,
    unitPriceMinor: line.unitPriceMinor,
    subtotalMinor: amounts[index]!.subtotal,
    discountMinor: amounts[index]!.discount,
    taxMinor: amounts[index]!.tax,
    totalMinor: amounts[index]!.total,
  }))
}

export type OrderItemRow = ReturnType<typeof orderItemRows>[number]
