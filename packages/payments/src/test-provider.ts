/**
 * The built-in `test` provider: the default, it needs no account and no network. The API and the
 * worker are separate processes, so it keeps no state: the reference it hands out encodes what
 * retrieve answers later (`pay_test_<paymentId>.<amountMinor>.<currency>.<capture>.<token>`).
 *
 * Tokens: `tok_visa` authorizes (captures with capture 'automatic'); `tok_declined` fails with
 * card_declined; `tok_error` throws ProviderUnavailableError; `tok_3ds` requires the customer's
 * action and stays so; `tok_refund_refused` is paid as `tok_visa`, but its refunds are refused
 * (ProviderRefusedError charge_disputed); any other token fails with invalid_token.
 *
 * It remembers neither captures nor refunds: capture answers the amount asked; refund answers the
 * authorized amount as captured with only this refund as refunded, so after a partial capture its
 * payment contradicts what was captured. Keep the refund's reference, not its payment: the service
 * keeps the sums. Retrieve of a manual payment answers authorized even after its capture.
 */
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import {
  ProviderRefusedError,
  ProviderUnavailableError,
  WebhookSignatureError,
  type AuthorizeRequest,
  type CaptureMode,
  type PaymentProvider,
  type ProviderPayment,
} from '@commerce/domain'

export interface TestProviderOptions {
  /** Delays every call, to stand in for a slow provider. */
  latencyMs?: number
}

interface EncodedPayment {
  paymentId: string
  amountMinor: number
  currency: string
  capture: CaptureMode
  token: string
}

const PREFIX = 'pay_test_'
/** A payment taken as tok_visa's, whose refunds the provider refuses. */
const REFUND_REFUSED = 'tok_refund_refused'

function encodeReference(payment: EncodedPayment): string {
  return `${PREFIX}${payment.paymentId}.${payment.amountMinor}.${payment.currency}.${payment.capture}.${payment.token}`
}

function decodeReference(reference: string): EncodedPayment | null {
  if (!reference.startsWith(PREFIX)) return null
  const [paymentId, amount, currency, capture, ...token] = reference.slice(PREFIX.length).split('.')
  if (!paymentId || !currency || !/^\d+$/.test(amount ?? '') || (capture !== 'automatic' && capture !== 'manual')) return null
  return { paymentId, amountMinor: Number(amount), currency, capture, token: token.join('.') }
}

/** What the token decides, the same at authorize and at every retrieve. */
function outcomeOf(payment: EncodedPayment): ProviderPayment {
  const reference = encodeReference(payment)
  const base = {
    reference,
    amountMinor: payment.amountMinor,
    capturedMinor: 0,
    refundedMinor: 0,
    currency: payment.currency,
    nextAction: null,
    failure: null,
  }
  switch (payment.token) {
    case 'tok_visa':
    case REFUND_REFUSED:
      return payment.capture === 'automatic'
        ? { ...base, status: 'captured', capturedMinor: payment.amountMinor }
        : { ...base, status: 'authorized' }
    case 'tok_declined':
      return { ...base, status: 'failed', failure: { code: 'card_declined', message: 'The card was declined' } }
    case 'tok_error':
      throw new ProviderUnavailableError('The test provider was told to fail (tok_error)')
    case 'tok_3ds':
      return {
        ...base,
        status: 'requires_action',
        nextAction: { type: 'redirect', client_secret: null, redirect_url: `https://example.com/3ds/${reference}` },
      }
    default:
      return { ...base, status: 'failed', failure: { code: 'invalid_token', message: `Unknown test token '${payment.token}'` } }
  }
}

function encodedFrom(request: AuthorizeRequest): EncodedPayment {
  const { paymentId, amountMinor, currency, capture, token } = request
  return { paymentId, amountMinor, currency, capture, token }
}

/** The payment a reference encodes, refused when its state does not allow the move. */
function truthFor(reference: string, move: string, allowed: ProviderPayment['status'][]): ProviderPayment {
  const payment = decodeReference(reference)
  if (!payment) throw new Error(`Not a test provider reference: '${reference}'`)
  const truth = outcomeOf(payment)
  if (!allowed.includes(truth.status)) throw new Error(`The test provider cannot ${move} a ${truth.status} payment`)
  return truth
}

export function createTestProvider({ latencyMs = 0 }: TestProviderOptions = {}): PaymentProvider {
  const delay = async () => {
    if (latencyMs > 0) await sleep(latencyMs)
  }

  return {
    name: 'test',
    decidesInProcess: latencyMs === 0,
    async authorize(request) {
      await delay()
      return outcomeOf(encodedFrom(request))
    },
    async capture({ reference, amountMinor }) {
      await delay()
      return { ...truthFor(reference, 'capture', ['authorized']), status: 'captured', capturedMinor: amountMinor }
    },
    async cancel({ reference }) {
      await delay()
      return { ...truthFor(reference, 'cancel', ['authorized', 'requires_action']), status: 'canceled', nextAction: null }
    },
    async refund({ reference, amountMinor }) {
      await delay()
      // A manual payment's reference still says authorized after its capture: it cannot tell.
      const truth = truthFor(reference, 'refund', ['authorized', 'captured'])
      if (decodeReference(reference)?.token === REFUND_REFUSED) throw new ProviderRefusedError('charge_disputed', 'The test provider refuses refunds of this payment (tok_refund_refused)')
      return {
        reference: `re_test_${randomUUID()}`,
        payment: { ...truth, status: 'captured', capturedMinor: truth.amountMinor, refundedMinor: amountMinor },
      }
    },
    async retrieve({ paymentId, reference }) {
      await delay()
      const payment = reference === null ? null : decodeReference(reference)
      return payment && payment.paymentId === paymentId ? outcomeOf(payment) : null
    },
    async parseWebhook() {
      await delay()
      throw new WebhookSignatureError('The test provider sends no webhooks')
    },
  }
}

export const testProvider: PaymentProvider = createTestProvider()
