/**
 * The payment provider the API talks to (the interface is @commerce/domain's PaymentProvider;
 * the built-in `test` provider and the Stripe adapter are @commerce/payments), and how its
 * failures are answered.
 */
import { ProviderRefusedError, ProviderUnavailableError, type PaymentProvider } from '@commerce/domain'
import { ApiError } from '../errors.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Payments go through this provider (PAYMENT_PROVIDER, the built-in `test` one by default, or the one buildApp is given). */
    paymentProvider: PaymentProvider
  }
}

/**
 * Calls the provider: one that cannot answer is 502 payment_provider_error (the client may retry);
 * one that refuses the request as asked (its 4xx: more refunded than is left there, a payment it
 * no longer holds) is 409 payment_provider_refused, naming the provider's code.
 */
export async function callProvider<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (error) {
    if (error instanceof ProviderUnavailableError) {
      throw new ApiError('payment_provider_error', 'The payment provider failed; nothing was charged. Retry later')
    }
    if (error instanceof ProviderRefusedError) throw new ApiError('payment_provider_refused', error.message, [{ field: 'payment', message: error.code }])
    throw error
  }
}
