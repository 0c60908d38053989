/**
 * `fanout-event {event_ids}` (the events of one transaction) or `{event_ids, webhook_ids}` (a
 * share of a larger fan-out, as pairs): the notifications of the events (emails, each sent by a
 * send-notification job of its own), then the first attempt of each delivery — one per event and
 * active subscription that wants it — made here, all at once, and recorded with the delivery in
 * one statement; only failures queue a job (their retry). It does not wait for slow endpoints
 * (attemptAll): an attempt still in flight is recorded as a pending delivery with a lease job,
 * and recorded again when it ends; one put off gets a pending delivery and its job. A fan-out
 * wider than FIRST_ATTEMPTS_PER_JOB is split into jobs of that many pairs first, so no job runs
 * much longer than one attempt's time limit (the dead-worker unlock must never see a live job as
 * stale). Run again after a crash, it sends only what was not recorded (at least once).
 */
import type { Task } from 'graphile-worker'
import { createNotifications, newId, recordFirstAttempts, splitFanOut, sqlOf, unsentPairs } from '@commerce/db'
import { attemptAll, disableDue, disablePeriodSeconds, reportAttempt, reportGone, reportStarted, stepOf, type DeliverySettings } from '../delivery.js'
import { recordWhenDone, type DeliveryStore } from './deliver-webhook.js'

/** First attempts one fan-out job makes at once. */
export const FIRST_ATTEMPTS_PER_JOB = 100

export interface FanOutPayload {
  event_ids: string[]
  /** With it, the pairs (event_ids[i], webhook_ids[i]) only. */
  webhook_ids?: string[]
}

/** `notify`: the events' notifications are made too (NOTIFICATIONS_ENABLED). */
export function createFanOutEvent(store: DeliveryStore, settings: DeliverySettings, notify: boolean): Task {
  const sql = sqlOf(settings.db)
  return async (payload) => {
    const { event_ids: eventIds, webhook_ids: webhookIds } = payload as FanOutPayload
    // The event's emails: made with their first attempts' jobs, once (a share of a split fan-out has none to make).
    if (notify && !webhookIds) await createNotifications(sql, eventIds, eventIds.map(() => newId()))
    const pairs = await unsentPairs(sql, { eventIds, webhookIds })
    if (pairs.length === 0) return
    if (pairs.length > FIRST_ATTEMPTS_PER_JOB) {
      const shares = []
      for (let start = 0; start < pairs.length; start += FIRST_ATTEMPTS_PER_JOB) {
        const share = pairs.slice(start, start + FIRST_ATTEMPTS_PER_JOB)
        shares.push({ event_ids: share.map((pair) => pair.eventId), webhook_ids: share.map((pair) => pair.webhookId) })
      }
      await splitFanOut(sql, shares)
      return
    }
    const started = await attemptAll(pairs, settings)
    const attempts = pairs.map((pair, n) => ({
      deliveryId: newId(),
      webhookId: pair.webhookId,
      eventId: pair.eventId,
      step: stepOf(started[n]!, 1, 0, settings),
    }))
    const { gone, due } = await recordFirstAttempts(sql, attempts, disablePeriodSeconds(settings))
    await disableDue(settings, due)
    const goneIds = new Set(gone)
    pairs.forEach((target, n) => {
      const { deliveryId, step } = attempts[n]!
      const start = started[n]!
      if (goneIds.has(deliveryId)) return reportGone(settings, { deliveryId, webhookId: target.webhookId, attempt: 1 })
      if (step.outcome) return reportAttempt(settings, { deliveryId, target, attempt: 1, outcome: step.outcome, next: step })
      reportStarted(settings, start)
      if ('inFlight' in start) recordWhenDone(store, settings, { inFlight: start.inFlight, deliveryId, attempt: 1, retry: 0, target })
    })
  }
}
