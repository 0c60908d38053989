/**
 * Endpoint health, kept in the statement that records a batch of attempts: per subscription, the
 * failures since its last success, its last success and failure, and when its failure streak
 * began. A subscription failing, with no success, for longer than WEBHOOK_DISABLE_AFTER is
 * disabled there too — never deleted — with a `webhook.disabled` event (the next of the
 * subscription's sequence) written, queued and announced in that same statement, so the event exists exactly when the subscription was
 * disabled.
 */
import { EVENTS_CHANNEL, newId } from '@commerce/db'

/** A timestamptz as the API writes instants (toISOString: UTC, milliseconds, `Z`). */
const iso = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

/**
 * CTEs over `source`, a query of (webhook_id, succeeded) per attempt, and three parameters from
 * healthParams: $first the disable-after period in seconds (null: never), $first+1 the batch's
 * subscriptions and $first+2 an event id for each. `kept` holds the updated subscriptions and
 * `disabled_events` the events of those this statement disabled; DISABLED_COLUMNS reads them.
 */
export function healthCtes(source: string, first: number): string {
  const due = `(not h.succeeded and w.is_active and w.failing_since <= now() - make_interval(secs => $${first}::float8))`
  return `health as (
  select webhook_id, bool_or(succeeded) as succeeded, count(*) filter (where not succeeded)::int as failures
  from (${source}) as s(webhook_id, succeeded) group by webhook_id),
kept as (
  update webhooks w set
    consecutive_failures = case when h.succeeded then 0 else w.consecutive_failures + h.failures end,
    last_success_at = case when h.succeeded then now() else w.last_success_at end,
    last_failure_at = case when h.failures > 0 then now() else w.last_failure_at end,
    failing_since = case when h.succeeded then null else coalesce(w.failing_since, now()) end,
    is_active = w.is_active and not coalesce(${due}, false),
    disabled_at = case when ${due} then now() else w.disabled_at end,
    disabled_reason = case when ${due} then 'Every attempt failed since ' || ${iso('w.failing_since')} else w.disabled_reason end
  from health h where w.id = h.webhook_id
  -- SET reads the row as it was, RETURNING as it is now: disabled_at = now() marks the rows this
  -- statement disabled (also when a concurrent statement got there first and this one waited).
  returning w.*, not w.is_active and w.disabled_at = now() as disabled),
disabled_numbered as (
  insert into event_sequences as s (resource_id, last_sequence)
  select id, 1 from kept where disabled order by id
  on conflict (resource_id) do update set last_sequence = s.last_sequence + 1
  returning resource_id, last_sequence),
disabled_events as (
  insert into events (id, kind, resource_id, sequence, data)
  select n.event_id, 'webhook.disabled', k.id, q.last_sequence, json_build_object(
    'id', k.id, 'url', k.url, 'events', k.events, 'description', k.description, 'is_active', k.is_active,
    'previous_secret_expires_at', case when k.previous_secret_expires_at > now() then ${iso('k.previous_secret_expires_at')} end,
    'consecutive_failures', k.consecutive_failures, 'last_success_at', ${iso('k.last_success_at')},
    'last_failure_at', ${iso('k.last_failure_at')}, 'failing_since', ${iso('k.failing_since')},
    'disabled_at', ${iso('k.disabled_at')}, 'disabled_reason', k.disabled_reason,
    'created_at', ${iso('k.created_at')}, 'updated_at', ${iso('k.updated_at')})
  from kept k join unnest($${first + 1}::uuid[], $${first + 2}::uuid[]) as n(webhook_id, event_id) on n.webhook_id = k.id
    join disabled_numbered q on q.resource_id = k.id
  returning id),
disabled_queued as (insert into event_outbox (event_ids) select array_agg(id order by id) from disabled_events having count(*) > 0)`
}

/**
 * Columns of the recording statement's final select: the subscriptions it disabled, and their
 * events announced (a NOTIFY only when there are some, rare enough to send inside the transaction).
 */
export const DISABLED_COLUMNS = `array(select id from kept where disabled) as "disabled",
  (select count(*) from (select pg_notify('${EVENTS_CHANNEL}', string_agg(id::text, ',')) from disabled_events having count(*) > 0) as n)
    as "announced"`

/** The three parameters of healthCtes for a batch of attempts to these subscriptions. */
export function healthParams(webhookIds: readonly string[], disableAfterMs: number | null): unknown[] {
  const hooks = [...new Set(webhookIds)]
  return [disableAfterMs === null ? null : disableAfterMs / 1000, hooks, hooks.map(() => newId())]
}
