/**
 * What the worker's webhook deliveries read: the (event, subscription) pairs a fan-out sends to,
 * and the deliveries a retry or redelivery job sends again, each with the event, where it goes
 * and the secrets that sign it.
 */
import type { events, webhookDeliveries, webhooks } from '../schema/index.js'
import type { SqlClient } from '../transaction.js'
import type { JsonRow } from './json-rows.js'

type EventJson = JsonRow<typeof events.$inferSelect>

/** An event and where it goes. */
export interface Target {
  url: JsonRow<typeof webhooks.$inferSelect>['url']
  /** The current secret, then the previous one while its grace period after a rotation lasts. */
  secrets: [string, ...string[]]
  webhookId: string
  eventId: string
  kind: EventJson['kind']
  data: EventJson['data']
  /** As text (new Date() reads it). */
  createdAt: EventJson['createdAt']
  /** What the event is about, and its number among that resource's events. */
  resourceId: EventJson['resourceId']
  sequence: EventJson['sequence']
  /** The API request that wrote the event (its X-Request-Id), for the logs; null when none did. */
  requestId: EventJson['requestId']
}

/**
 * A Target's columns, from an event `e` and a subscription `w`; the secrets are the current one,
 * then the previous one until its grace period ends (now() of the statement that reads them).
 */
const TARGET_COLUMNS = `e.id as "eventId", e.kind, e.data, e.created_at as "createdAt", e.resource_id as "resourceId", e.sequence,
  e.request_id as "requestId", w.id as "webhookId", w.url,
  array_remove(array[w.secret, case when w.previous_secret_expires_at > now() then w.previous_secret end], null) as secrets`

// Pairs already recorded (by an earlier run of the job) are not sent again.
const NOT_RECORDED = `not exists (select from webhook_deliveries d where d.webhook_id = w.id and d.event_id = e.id)`

// $1 the events.
const PAIRS_OF_EVENTS = `select ${TARGET_COLUMNS}
  from events e join webhooks w on w.is_active and (e.kind = any(w.events) or '*' = any(w.events))
  where e.id = any($1::uuid[]) and ${NOT_RECORDED}
  order by e.id, w.id`

// $1 the events, $2 the subscriptions, pair by pair.
const PAIRS = `select ${TARGET_COLUMNS}
  from unnest($1::uuid[], $2::uuid[]) as p(event_id, webhook_id)
  join events e on e.id = p.event_id join webhooks w on w.id = p.webhook_id and w.is_active
  where ${NOT_RECORDED}
  order by e.id, w.id`

/**
 * The pairs of these events and the active subscriptions that want them, or (with
 * `webhookIds`) the pairs (eventIds[i], webhookIds[i]) whose subscription is still active; in
 * event then subscription order, without those that have a delivery already.
 */
export function unsentPairs(sql: SqlClient, pairs: { eventIds: string[]; webhookIds?: string[] | undefined }): Promise<Target[]> {
  return pairs.webhookIds
    ? sql.unsafe<Target[]>(PAIRS, [pairs.eventIds, pairs.webhookIds], { prepare: true })
    : sql.unsafe<Target[]>(PAIRS_OF_EVENTS, [pairs.eventIds], { prepare: true })
}

/** A delivery to send again, with the attempts it had and whether its subscription is active. */
export type LoadedDelivery = Target & {
  deliveryId: string
  attempts: JsonRow<typeof webhookDeliveries.$inferSelect>['attempts']
  isActive: boolean
}

// $1 the deliveries.
const LOAD = `select d.id as "deliveryId", d.attempts, w.is_active as "isActive", ${TARGET_COLUMNS}
  from webhook_deliveries d join webhooks w on w.id = d.webhook_id join events e on e.id = d.event_id
  where d.id = any($1::uuid[])`

/** These deliveries (those deleted with their subscription are not there). */
export function loadDeliveries(sql: SqlClient, deliveryIds: readonly string[]): Promise<LoadedDelivery[]> {
  return sql.unsafe<LoadedDelivery[]>(LOAD, [deliveryIds as string[]], { prepare: true })
}

// $1 the delivery.
const END_UNSENT = `update webhook_deliveries set status = 'failed', next_attempt_at = null, updated_at = now() where id = $1`

/** Ends a delivery without sending it (its subscription is inactive). */
export async function endUnsentDelivery(sql: SqlClient, deliveryId: string): Promise<void> {
  await sql.unsafe(END_UNSENT, [deliveryId], { prepare: true })
}
