export { createTestProvider, testProvider, type TestProviderOptions } from './test-provider.js'
export { STRIPE_API_VERSION, createStripeProvider, type StripeProviderOptions } from './stripe.js'
