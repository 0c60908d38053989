/**
 * A payment as the API shows it (the Payment schema of @commerce/domain), from the JSON shape the
 * order read gives it (@commerce/db sql/order-read.ts): one definition for the API's answers and
 * for the payment events the settlement of a checkout writes, wherever it runs (the API, the
 * worker).
 */
import { toMajorUnits, type Payment, type Refund } from '@commerce/domain'
import type { PaymentJson, RefundJson } from '@commerce/db'

const iso = (value: string | Date) => new Date(value).toISOString()

export function toRefund(refund: RefundJson): Refund {
  return {
    id: refund.id,
    payment_id: refund.paymentId,
    order_id: refund.orderId,
    amount: toMajorUnits(refund.amountMinor, refund.currency),
    currency: refund.currency,
    reason: refund.reason,
    status: refund.status,
    failure_code: refund.failureCode,
    failure_message: refund.failureMessage,
    created_at: iso(refund.createdAt),
  }
}

export function toPayment(payment: PaymentJson): Payment {
  return {
    id: payment.id,
    order_id: payment.orderId,
    checkout_id: payment.checkoutId,
    provider: payment.provider,
    method: payment.method,
    status: payment.status,
    capture_mode: payment.captureMode,
    amount: toMajorUnits(payment.amountMinor, payment.currency),
    amount_captured: toMajorUnits(payment.capturedMinor, payment.currency),
    amount_refunded: toMajorUnits(payment.refundedMinor, payment.currency),
    currency: payment.currency,
    failure_code: payment.failureCode,
    failure_message: payment.failureMessage,
    refunds: payment.refunds.map(toRefund),
    created_at: iso(payment.createdAt),
  }
}
