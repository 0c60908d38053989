/**
 * Endpoint health, kept by the statements that record a batch of webhook attempts
 * (delivery-records.ts): per subscription, the failures since its last success, its last success
 * and failure, and when its failure streak began. A subscription failing, with no success, for
 * longer than WEBHOOK_DISABLE_AFTER is then disabled — never deleted — by disableFailingWebhooks,
 * in a transaction with its `webhook.disabled` event (the event writer's, outbox.ts), so the
 * event exists exactly when the subscription was disabled.
 */
import { and, eq, inArray, lte, sql } from 'drizzle-orm'
import type { Database } from '../client.js'
import { writeEvents } from '../outbox.js'
import { webhooks } from '../schema/index.js'
import { webhookView } from '../webhook-views.js'

/**
 * CTEs over `source`, a query of (webhook_id, succeeded) per attempt: `kept` holds the
 * subscriptions it updated, as they are now.
 */
export function healthCtes(source: string): string {
  return `health as (
  select webhook_id, bool_or(succeeded) as succeeded, count(*) filter (where not succeeded)::int as failures
  from (${source}) as s(webhook_id, succeeded) group by webhook_id),
kept as (
  update webhooks w set
    consecutive_failures = case when h.succeeded then 0 else w.consecutive_failures + h.failures end,
    last_success_at = case when h.succeeded then now() else w.last_success_at end,
    last_failure_at = case when h.failures > 0 then now() else w.last_failure_at end,
    failing_since = case when h.succeeded then null else coalesce(w.failing_since, now()) end
  from health h where w.id = h.webhook_id
  returning w.id, w.is_active, w.failing_since)`
}

/**
 * A column of the recording statement's final select: the subscriptions of `kept` failing for
 * longer than `period` (an SQL expression of seconds; null: never), to disable.
 */
export function dueColumn(period: string): string {
  return `array(select id from kept where is_active and failing_since <= now() - make_interval(secs => ${period}::float8)) as "due"`
}

/**
 * Disables those of these subscriptions still active and failing for longer than
 * `disableAfterSeconds` (another worker may have disabled them, or a success come, since they
 * were found due), each with its `webhook.disabled` event; answers the ids it disabled.
 */
export async function disableFailingWebhooks(db: Database, webhookIds: readonly string[], disableAfterSeconds: number): Promise<string[]> {
  return db.transaction(async (tx) => {
    const disabled = await tx
      .update(webhooks)
      .set({
        isActive: false,
        disabledAt: sql`now()`,
        disabledReason: sql`'Every attempt failed since ' || to_char(${webhooks.failingSince} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
        // The worker's health writes are not changes of the subscription.
        updatedAt: sql`${webhooks.updatedAt}`,
      })
      .where(
        and(
          inArray(webhooks.id, [...webhookIds]),
          eq(webhooks.isActive, true),
          lte(webhooks.failingSince, sql`now() - make_interval(secs => ${disableAfterSeconds}::float8)`),
        ),
      )
      .returning()
    if (disabled.length > 0) {
      await writeEvents(
        tx,
        disabled.map((row) => ({ kind: 'webhook.disabled', resourceId: row.id, data: webhookView(row) })),
      )
    }
    return disabled.map((row) => row.id)
  })
}
