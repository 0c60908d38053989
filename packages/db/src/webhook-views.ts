/**
 * Webhook subscriptions and their deliveries as the API shows them: one mapper for the API's
 * answers and for the `webhook.disabled` event the worker writes (sql/endpoint-health.ts). The
 * secrets are never shown.
 */
import type { Webhook, WebhookDelivery } from '@commerce/domain'
import type { events, webhookAttempts, webhookDeliveries, webhooks } from './schema/index.js'

const iso = (date: Date | null) => date?.toISOString() ?? null

export function webhookView(row: typeof webhooks.$inferSelect): Webhook {
  const graceEnds = row.previousSecretExpiresAt
  return {
    id: row.id,
    url: row.url,
    events: row.events as Webhook['events'],
    description: row.description,
    is_active: row.isActive,
    previous_secret_expires_at: graceEnds && graceEnds > new Date() ? graceEnds.toISOString() : null,
    consecutive_failures: row.consecutiveFailures,
    last_success_at: iso(row.lastSuccessAt),
    last_failure_at: iso(row.lastFailureAt),
    failing_since: iso(row.failingSince),
    disabled_at: iso(row.disabledAt),
    disabled_reason: row.disabledReason,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

/** A delivery with its event's kind and its attempts (in attempt order). */
export function deliveryView(
  delivery: typeof webhookDeliveries.$inferSelect,
  kind: (typeof events.$inferSelect)['kind'],
  attempts: readonly (typeof webhookAttempts.$inferSelect)[],
): WebhookDelivery {
  return {
    id: delivery.id,
    webhook_id: delivery.webhookId,
    event_id: delivery.eventId,
    event: kind,
    status: delivery.status,
    attempts: delivery.attempts,
    next_attempt_at: iso(delivery.nextAttemptAt),
    last_status_code: delivery.lastStatusCode,
    created_at: delivery.createdAt.toISOString(),
    updated_at: delivery.updatedAt.toISOString(),
    attempt_log: attempts.map((attempt) => ({
      attempt: attempt.attempt,
      succeeded: attempt.succeeded,
      status_code: attempt.statusCode,
      duration_ms: attempt.durationMs,
      error: attempt.error,
      response_body: attempt.responseBody,
      created_at: attempt.createdAt.toISOString(),
    })),
  }
}
