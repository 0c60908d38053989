/**
 * What a webhook delivery attempt came to, as the attempt log records it and as the endpoints'
 * limits (endpoints.ts), the metrics (metrics.ts) and the delivery log lines (delivery.ts) read
 * it: answered or not, timed out or not, what it led to, or why it was put off instead.
 */
import type { AttemptOutcome as RecordedOutcome, DeliveryStep } from '@commerce/db'
import { RefusedTarget } from './ssrf.js'

/** What an attempt came to (an attempt log row's columns). */
export type Outcome = RecordedOutcome

/** Where a delivery stands after an attempt: done, retried later, or failed. */
export type NextStep = Pick<DeliveryStep, 'status' | 'nextAttemptAt'>

/** What an attempt led to: delivered, another attempt scheduled, or given up. */
export type AttemptOutcome = 'succeeded' | 'retrying' | 'failed'

export function attemptOutcome(next: NextStep): AttemptOutcome {
  return next.status === 'pending' ? 'retrying' : next.status
}

/** Why an attempt was put off rather than made (no attempt against the receiver). */
export type DeferralReason =
  /** Its endpoint is slowed down and has an attempt in flight (endpoints.ts). */
  | 'slowed_down'
  /** Every connection to its receiver's origin stayed in use while the job waited (origin-connections.ts). */
  | 'connections_busy'

const TIMED_OUT = 'timed out after'

/** Whether the attempt ran out of its time limit (connecting, waiting, or reading the answer). */
export function timedOut(outcome: Outcome): boolean {
  return outcome.error?.startsWith(TIMED_OUT) ?? false
}

/**
 * undici's own limits (connecting, waiting for the headers, between body chunks) are the time
 * limit too: whichever of them and the request's signal fires first, it is a timeout, which slows
 * the endpoint down (endpoints.ts). A host that drops packets ends on a connect timeout.
 */
const UNDICI_TIMEOUTS = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'])

/** What an attempt's failure is recorded as. */
export function describeError(error: unknown, timeoutMs: number): string {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof RefusedTarget) return cause.message
    if (cause.name === 'TimeoutError' || cause.name === 'AbortError' || UNDICI_TIMEOUTS.has((cause as { code?: string }).code ?? '')) {
      return `${TIMED_OUT} ${timeoutMs} ms`
    }
  }
  if (!(error instanceof Error)) return String(error)
  const code = (error as { code?: string }).code ?? (error.cause as { code?: string } | undefined)?.code
  const message = error.message || (error.cause instanceof Error ? error.cause.message : '')
  return code ? `${code}: ${message}` : message
}
