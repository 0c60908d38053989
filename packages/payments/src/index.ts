export { createTestProvider, testProvider, type TestProviderOptions } from './test-provider.js'
export { STRIPE_API_VERSION, createStripeProvider, type StripeProviderOptions } from './stripe.js'
export { toPayment, toRefund, type PaymentJson, type RefundJson } from './view.js'
export { settlePayment, type SettleOptions, type Settled } from './settle.js'
