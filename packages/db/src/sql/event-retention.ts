/**
 * The retention of the event log and of webhook deliveries, swept in batches by the worker's
 * hourly expire-events (EVENT_RETENTION) and expire-webhook-deliveries
 * (WEBHOOK_DELIVERY_RETENTION), and what a WebSocket resume asks of it (apps/api routes/ws).
 *
 * Events are swept in id order (UUIDv7: the order they were written in, on the primary key's
 * index) from where the last sweep stopped (event_retention), so that the events kept behind it
 * are not read again: an order's (its history, GET /orders/:id/history), and those a delivery or
 * a notification still refers to. Such an event goes with the last delivery that kept it, once
 * its sweep has passed. Sequence numbers are unaffected: they come from event_sequences, which
 * keeps each resource's last number whatever is deleted.
 */
import type { SqlClient } from '../transaction.js'

/** Events examined per statement, and deliveries deleted per statement: no statement holds many row locks beside the API's writes. */
export const EXPIRED_EVENTS_BATCH = 1_000
export const OLD_DELIVERIES_BATCH = 1_000

/** The moment the retention ($1, in seconds) reaches back to. */
const CUTOFF = `now() - make_interval(secs => $1::float8)`
/** The smallest UUIDv7 of that moment: the ids made before it sort below it. */
const CUTOFF_ID = `(lpad(to_hex(floor(extract(epoch from ${CUTOFF}) * 1000)::bigint), 12, '0') || repeat('0', 20))::uuid`

/**
 * An event `e` the retention may delete: not an order's, and referred to by no notification and
 * by no webhook delivery other than those the statement deletes (`leaving`, a CTE of their ids).
 */
function deletable(leaving?: string): string {
  return `not exists (select from orders o where o.id = e.resource_id)
    and not exists (select from webhook_deliveries d where d.event_id = e.id${leaving ? ` and d.id not in (select id from ${leaving})` : ''})
    and not exists (select from notifications n where n.event_id = e.id)`
}

// $1 the retention in seconds. `swept` moves on over every event examined, kept or deleted.
const SWEEP_EVENTS = `with examined as (
  select id from events
  where id > coalesce((select swept_through from event_retention), '00000000-0000-0000-0000-000000000000') and id < ${CUTOFF_ID}
  order by id limit ${EXPIRED_EVENTS_BATCH}),
deleted as (delete from events e where e.id in (select id from examined) and ${deletable()} returning e.id),
swept as (
  insert into event_retention (swept_through) select id from examined order by id desc limit 1
  on conflict (singleton) do update set swept_through = greatest(event_retention.swept_through, excluded.swept_through))
select (select count(*) from examined)::int as "examined", (select count(*) from deleted)::int as "deleted"`

/**
 * Deletes the events older than the retention that nothing keeps, up to EXPIRED_EVENTS_BATCH
 * examined; answers how many it examined (fewer than a batch: the sweep is done) and deleted.
 */
export async function sweepExpiredEvents(sql: SqlClient, retentionMs: number): Promise<{ examined: number; deleted: number }> {
  const [row] = await sql.unsafe<{ examined: number; deleted: number }[]>(SWEEP_EVENTS, [retentionMs / 1000], { prepare: true })
  return row!
}

// $1 the retention in seconds. In id order (creation order, the primary key's index); the
// conditions are repeated on the deleted row, so one redelivered meanwhile (pending again) stays.
// A delivery waiting for an attempt is pending, whatever its age.
const OLD = `status <> 'pending' and updated_at < ${CUTOFF}`
const DELETE_OLD_DELIVERIES = `with old as (
  select id from webhook_deliveries where id < ${CUTOFF_ID} and ${OLD} order by id limit ${OLD_DELIVERIES_BATCH}),
deleted as (delete from webhook_deliveries d using old where d.id = old.id and ${OLD} returning d.id, d.event_id),
freed as (
  delete from events e where e.id in (select event_id from deleted)
    and e.id <= (select swept_through from event_retention) and ${deletable('deleted')})
select count(*)::int as "deleted" from deleted`

/**
 * Deletes up to OLD_DELIVERIES_BATCH deliveries (with their attempts) whose last attempt is
 * older than the retention and that wait for none, and the events they alone kept past the
 * event sweep; answers how many deliveries.
 */
export async function deleteOldDeliveries(sql: SqlClient, retentionMs: number): Promise<number> {
  const [row] = await sql.unsafe<{ deleted: number }[]>(DELETE_OLD_DELIVERIES, [retentionMs / 1000], { prepare: true })
  return row!.deleted
}

const SWEPT_PAST = `select exists (select from event_retention where swept_through > $1::uuid) as "swept"`

/** Whether the event sweep has passed this position (an event id, or any UUIDv7): events after it may be gone. */
export async function eventsSweptPast(sql: SqlClient, position: string): Promise<boolean> {
  const [row] = await sql.unsafe<{ swept: boolean }[]>(SWEPT_PAST, [position], { prepare: true })
  return row!.swept
}
