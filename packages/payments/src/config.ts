/**
 * The payment provider the environment chooses, read the same way by the API and the worker: the
 * built-in `test` provider unless Stripe is chosen, by PAYMENT_PROVIDER=stripe or by setting its
 * keys. A problem names its variable and never shows a secret.
 */
import { type PaymentProvider } from '@commerce/domain'
import { custom, duration, oneOf, readEnvironment, text, type Environment, type EnvironmentSource } from '@commerce/runtime/config'
import { Type } from 'typebox'
import { createStripeProvider, type StripeProviderOptions } from './stripe.js'
import { testProvider } from './test-provider.js'

/** The payment provider's variables, part of the API's and the worker's tables. */
export const PAYMENT_VARIABLES = {
  /** Unset: Stripe when one of its keys is set, else the test provider. */
  PAYMENT_PROVIDER: oneOf(['test', 'stripe']),
  STRIPE_SECRET_KEY: text({ secret: true }),
  STRIPE_WEBHOOK_SECRET: text({ secret: true }),
  PAYMENT_PROVIDER_TIMEOUT: duration({ default: '30s', example: '30s or 1500ms' }),
  /** A proxy, or the fake Stripe in tests: the SDK's host, port and protocol. */
  STRIPE_API_BASE: custom({
    schema: Type.Object({ host: Type.String(), port: Type.Integer(), protocol: Type.Union([Type.Literal('http'), Type.Literal('https')]) }),
    decode: apiBase,
    problem: 'must be an http:// or https:// URL with no path, such as https://stripe-proxy.internal:8443',
    secret: true,
  }),
}

/** The provider the variables choose, and what is wrong with them together (each a line naming one; the test provider while any is). */
export function choosePaymentProvider(values: Environment<typeof PAYMENT_VARIABLES>): { provider: PaymentProvider; problems: string[] } {
  const { PAYMENT_PROVIDER: chosen, STRIPE_SECRET_KEY: secretKey, STRIPE_WEBHOOK_SECRET: webhookSecret } = values
  const problems: string[] = []
  const stripe = chosen === 'stripe' || (chosen === undefined && (secretKey !== undefined || webhookSecret !== undefined))
  if (stripe) {
    // Half of Stripe's keys set is a mistake, not a request for the test provider.
    const why = chosen === 'stripe' ? 'when PAYMENT_PROVIDER=stripe' : `with ${secretKey ? 'STRIPE_SECRET_KEY' : 'STRIPE_WEBHOOK_SECRET'} (Stripe needs both)`
    if (!secretKey) problems.push(`STRIPE_SECRET_KEY is required ${why}`)
    if (!webhookSecret) problems.push(`STRIPE_WEBHOOK_SECRET is required ${why}`)
  }
  if (!stripe || !secretKey || !webhookSecret) return { provider: testProvider, problems }
  // One retry of the SDK's own (same idempotency key): past that the caller hears
  // ProviderUnavailableError, and the checkout or the sweep asks again later.
  const options: StripeProviderOptions = { secretKey, webhookSecret, ...values.STRIPE_API_BASE, timeoutMs: values.PAYMENT_PROVIDER_TIMEOUT, maxNetworkRetries: 1 }
  return { provider: createStripeProvider(options), problems }
}

/** The provider from the environment alone (problems of single variables first). */
export function paymentProviderFromEnv(env: EnvironmentSource): { provider: PaymentProvider; problems: string[] } {
  const { values, problems } = readEnvironment(PAYMENT_VARIABLES, env)
  const chosen = choosePaymentProvider(values)
  return { provider: problems.length > 0 ? testProvider : chosen.provider, problems: [...problems, ...chosen.problems] }
}

/** `https://stripe-proxy.internal:8443` as the SDK's host, port and protocol; undefined when it has a path or another scheme. */
function apiBase(value: string): Pick<StripeProviderOptions, 'host' | 'port' | 'protocol'> | undefined {
  try {
    const url = new URL(value)
    const protocol = url.protocol.slice(0, -1)
    if ((protocol === 'http' || protocol === 'https') && url.pathname === '/' && !url.search) {
      return { host: url.hostname, port: url.port ? Number(url.port) : protocol === 'https' ? 443 : 80, protocol }
    }
  } catch {
    // not a URL
  }
  return undefined
}
