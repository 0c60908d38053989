/**
 * `fanout-event {event_ids}` (the events of one transaction): one delivery, with its first
 * attempt's job, per event and active subscription that wants it. Running twice (at least once)
 * makes nothing twice: a subscription and an event make one delivery.
 */
import type { Task } from 'graphile-worker'
import { deliveryJobSpec, newId } from '@commerce/db'

const SUBSCRIBERS = `select e.id as "eventId", w.id as "webhookId"
  from events e join webhooks w on w.is_active and (e.kind = any(w.events) or '*' = any(w.events))
  where e.id = any($1::uuid[])`

const MAKE_DELIVERIES = `with made as (
  insert into webhook_deliveries (id, webhook_id, event_id, next_attempt_at)
  select made.id, made.webhook_id, made.event_id, now() from unnest($1::uuid[], $2::uuid[], $3::uuid[]) as made(id, webhook_id, event_id)
  on conflict (webhook_id, event_id) do nothing
  returning id)
select count(*)::int as "queued" from graphile_worker.add_jobs(array(
  select ${deliveryJobSpec({ deliveryId: 'made.id', attempt: '1', retry: '0', runAt: 'null', keyed: false })} from made order by made.id))
where exists (select from made)`

export interface FanOutPayload {
  event_ids: string[]
}

export const fanOutEvent: Task = async (payload, helpers) => {
  const { rows } = await helpers.query<{ eventId: string; webhookId: string }>(SUBSCRIBERS, [(payload as FanOutPayload).event_ids])
  if (rows.length === 0) return
  await helpers.query(MAKE_DELIVERIES, [rows.map(() => newId()), rows.map((row) => row.webhookId), rows.map((row) => row.eventId)])
}
