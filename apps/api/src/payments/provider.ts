/**
 * The payment provider the API talks to (the interface is @commerce/domain's PaymentProvider;
 * the built-in `test` provider and the Stripe adapter are @commerce/payments), and how its
 * failures are answered.
 */
import { ProviderUnavailableError, type PaymentProvider } from '@commerce/domain'
import { ApiError } from '../errors.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Payments go through this provider (PAYMENT_PROVIDER, the built-in `test` one by default, or the one buildApp is given). */
    paymentProvider: PaymentProvider
  }
}

/** Calls the provider; one that cannot answer is 502 payment_provider_error (the client may retry). */
export async function callProvider<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (error) {
    if (error instanceof ProviderUnavailableError) {
      throw new ApiError('payment_provider_error', 'The payment provider failed; nothing was charged. Retry later')
    }
    throw error
  }
}
