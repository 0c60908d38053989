/**
 * What this worker knows of each endpoint (subscription) right now, so that one slow receiver
 * cannot hold up the others:
 *
 * - **Lagging**: an endpoint with an attempt still in flight after the job that started it
 *   stopped waiting (HAND_OFF). Jobs do not wait for its attempts at all while that lasts; they
 *   run on in the background and are recorded when they end.
 * - **Slowed down**: an endpoint whose latest attempt timed out. It gets one attempt in flight
 *   at a time (per worker); an attempt that finds it busy is not made but deferred, by the time
 *   limit times its timeouts in a row (attempts in flight together count once; at most
 *   MAX_DEFERRAL_MS, plus up to a quarter of jitter so deferred attempts do not all come back
 *   together). An attempt that ends without timing
 *   out (any answer, even an error) lifts it. A subscription that keeps failing is disabled later
 *   by WEBHOOK_DISABLE_AFTER (@commerce/db endpoint-health.ts).
 *
 * In memory, per worker process: a new worker learns it again from its own attempts.
 */
import { timedOut, type Outcome } from './attempt-outcome.js'

/** A deferred attempt waits at most this long. */
export const MAX_DEFERRAL_MS = 5 * 60_000

/** When an attempt put off for `waitMs` is made: up to a quarter later, so that attempts put off together do not all come back together. */
export function putOffBy(waitMs: number): Date {
  return new Date(Date.now() + Math.round(waitMs * (1 + Math.random() / 4)))
}

interface Endpoint {
  inFlight: number
  /** Attempts in flight that a job stopped waiting for. */
  lingering: number
  /**
   * Timeouts in a row: the first, then one more for each attempt started while slowed down (a
   * burst of attempts that were in flight together counts once).
   */
  timeouts: number
}

export interface Permit {
  /** Whether the job should not wait for this attempt (its endpoint is lagging or slowed down). */
  readonly handOffAtOnce: boolean
  /** The job stopped waiting for this attempt, which is still in flight. */
  handedOff(): void
  /** The attempt ended with this outcome. */
  done(outcome: Outcome): void
  /** The attempt was not made after all (no connection to its origin came free): nothing was learned of the endpoint. */
  withdrawn(): void
}

export interface EndpointLimits {
  /** A permit to make an attempt to this subscription now, or when to try instead (deferred). */
  admit(webhookId: string): Permit | Date
}

export function createEndpointLimits(timeoutMs: number): EndpointLimits {
  const endpoints = new Map<string, Endpoint>()
  const forget = (webhookId: string, endpoint: Endpoint) => {
    if (endpoint.inFlight === 0 && endpoint.timeouts === 0) endpoints.delete(webhookId)
  }
  return {
    admit(webhookId) {
      let endpoint = endpoints.get(webhookId)
      if (!endpoint) endpoints.set(webhookId, (endpoint = { inFlight: 0, lingering: 0, timeouts: 0 }))
      if (endpoint.timeouts > 0 && endpoint.inFlight > 0) return putOffBy(Math.min(timeoutMs * endpoint.timeouts, MAX_DEFERRAL_MS))
      const state = endpoint
      state.inFlight += 1
      const slowed = state.timeouts > 0
      let lingering = false
      return {
        handOffAtOnce: state.lingering > 0 || slowed,
        handedOff() {
          if (lingering) return
          lingering = true
          state.lingering += 1
        },
        done(outcome) {
          state.inFlight -= 1
          if (lingering) state.lingering -= 1
          if (!timedOut(outcome)) state.timeouts = 0
          else state.timeouts = slowed ? state.timeouts + 1 : Math.max(state.timeouts, 1)
          forget(webhookId, state)
        },
        withdrawn() {
          state.inFlight -= 1
          forget(webhookId, state)
        },
      }
    },
  }
}
