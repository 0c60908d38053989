/**
 * The payment provider the environment chooses, read the same way by the API and the worker: the
 * built-in `test` provider unless Stripe is chosen, by PAYMENT_PROVIDER=stripe or by setting its
 * keys. A problem names its variable and never shows a secret.
 */
import { parseDuration, type PaymentProvider } from '@commerce/domain'
import { createStripeProvider, type StripeProviderOptions } from './stripe.js'
import { testProvider } from './test-provider.js'

const PROVIDERS = ['test', 'stripe']
const DEFAULT_TIMEOUT = '30s'

/** The provider, and what is wrong with its variables (each a line naming one; the test provider while any is). */
export function paymentProviderFromEnv(env: Readonly<Record<string, string | undefined>>): { provider: PaymentProvider; problems: string[] } {
  const text = (name: string) => {
    const value = env[name]?.trim()
    return value === '' ? undefined : value
  }
  const problems: string[] = []
  const chosen = text('PAYMENT_PROVIDER')
  if (chosen !== undefined && !PROVIDERS.includes(chosen)) problems.push(`PAYMENT_PROVIDER must be one of ${PROVIDERS.join(', ')} (got '${chosen}')`)
  const secretKey = text('STRIPE_SECRET_KEY')
  const webhookSecret = text('STRIPE_WEBHOOK_SECRET')
  const timeout = text('PAYMENT_PROVIDER_TIMEOUT') ?? DEFAULT_TIMEOUT
  const timeoutMs = parseDuration(timeout)
  if (!timeoutMs) problems.push(`PAYMENT_PROVIDER_TIMEOUT must be a duration such as 30s or 1500ms, more than zero (got '${timeout}')`)
  const server = apiBase(text('STRIPE_API_BASE'), problems)

  const stripe = chosen === 'stripe' || (chosen === undefined && (secretKey !== undefined || webhookSecret !== undefined))
  if (stripe) {
    // Half of Stripe's keys set is a mistake, not a request for the test provider.
    const why = chosen === 'stripe' ? 'when PAYMENT_PROVIDER=stripe' : `with ${secretKey ? 'STRIPE_SECRET_KEY' : 'STRIPE_WEBHOOK_SECRET'} (Stripe needs both)`
    if (!secretKey) problems.push(`STRIPE_SECRET_KEY is required ${why}`)
    if (!webhookSecret) problems.push(`STRIPE_WEBHOOK_SECRET is required ${why}`)
  }
  if (!stripe || problems.length > 0) return { provider: testProvider, problems }
  // One retry of the SDK's own (same idempotency key): past that the caller hears
  // ProviderUnavailableError, and the checkout or the sweep asks again later.
  const provider = createStripeProvider({ secretKey: secretKey!, webhookSecret: webhookSecret!, ...server, timeoutMs: timeoutMs!, maxNetworkRetries: 1 })
  return { provider, problems }
}

/** STRIPE_API_BASE (a proxy, or the fake Stripe in tests) as the SDK's host, port and protocol. */
function apiBase(value: string | undefined, problems: string[]): Pick<StripeProviderOptions, 'host' | 'port' | 'protocol'> {
  if (value === undefined) return {}
  try {
    const url = new URL(value)
    const protocol = url.protocol.slice(0, -1)
    if ((protocol === 'http' || protocol === 'https') && url.pathname === '/' && !url.search) {
      return { host: url.hostname, port: url.port ? Number(url.port) : protocol === 'https' ? 443 : 80, protocol }
    }
  } catch {
    // reported below
  }
  problems.push('STRIPE_API_BASE must be an http:// or https:// URL with no path, such as https://stripe-proxy.internal:8443')
  return {}
}
