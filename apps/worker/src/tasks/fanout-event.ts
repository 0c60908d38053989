/**
 * `fanout-event {event_id}`: one delivery, with its first attempt's job, per active subscription
 * that wants the event. Running twice for one event (at least once) makes nothing twice: a
 * subscription and an event make one delivery.
 */
import type { Task } from 'graphile-worker'
import { deliveryJobSpec, newId } from '@commerce/db'

const SUBSCRIBERS = `select w.id from webhooks w join events e on e.id = $1
  where w.is_active and (e.kind = any(w.events) or '*' = any(w.events))`

const MAKE_DELIVERIES = `with made as (
  insert into webhook_deliveries (id, webhook_id, event_id, next_attempt_at)
  select made.id, made.webhook_id, $1, now() from unnest($2::uuid[], $3::uuid[]) as made(id, webhook_id)
  on conflict (webhook_id, event_id) do nothing
  returning id)
select count(*)::int as "queued" from graphile_worker.add_jobs(array(
  select ${deliveryJobSpec({ deliveryId: 'made.id', attempt: '1', retry: '0', runAt: 'null' })} from made))`

export interface FanOutPayload {
  event_id: string
}

export const fanOutEvent: Task = async (payload, helpers) => {
  const eventId = (payload as FanOutPayload).event_id
  const { rows } = await helpers.query<{ id: string }>(SUBSCRIBERS, [eventId])
  if (rows.length === 0) return
  const webhookIds = rows.map((row) => row.id)
  await helpers.query(MAKE_DELIVERIES, [eventId, webhookIds.map(() => newId()), webhookIds])
}
