/**
 * The job queue (Graphile Worker, in the same database): its schema is installed by `migrate`,
 * and jobs are added from SQL inside the caller's transaction (sql/delivery-jobs.ts, the outbox
 * relay), so a job exists exactly when the change that asked for it was committed.
 */

/** Task identifiers, shared by the code that adds jobs and the worker that runs them. */
export const TASKS = {
  /** `{event_ids}`: the first attempts of the deliveries of these events, and their notifications (apps/worker). */
  fanOutEvent: 'fanout-event',
  /** `{delivery_id, attempt, retry}`: a retry or a redelivery of one delivery. */
  deliverWebhook: 'deliver-webhook',
  /** `{notification_id, attempt, retry}`: one attempt to send an email (the first, a retry or a resend). */
  sendNotification: 'send-notification',
  /** Hourly: deletes the stored answers of expired Idempotency-Keys. */
  expireIdempotencyKeys: 'expire-idempotency-keys',
  /** Hourly: deletes checkout reservations released longer than CHECKOUT_RESERVATION_RETENTION ago. */
  expireCheckoutReservations: 'expire-checkout-reservations',
  /** Hourly: deletes the events older than EVENT_RETENTION that nothing keeps (sql/event-retention.ts). */
  expireEvents: 'expire-events',
  /** Hourly: deletes the webhook deliveries whose last attempt is older than WEBHOOK_DELIVERY_RETENTION and that wait for none. */
  expireWebhookDeliveries: 'expire-webhook-deliveries',
  expireListingChanges: 'expire-listing-changes',
  /** `{id}`: writes one CSV export's file (keyed `export-csv:<id>`). */
  exportCsv: 'export-csv',
  /** `{id}`: validates, and unless a dry run applies, one CSV import (keyed `import-csv:<id>`). */
  importCsv: 'import-csv',
  /** Hourly: deletes expired uploads, and exports and imports finished longer than CSV_RETENTION ago, with their files. */
  expireFiles: 'expire-files',
  /** `{id}`, at a scheduled product's `published_at`: publishes every product whose moment has come (sql/product-publishing.ts). Added by the products_keep_status trigger. */
  publishProduct: 'publish-product',
  /** Every ten minutes: each product's units sold over the last 30 days, for sort=best_selling (sql/best-sellers.ts). */
  refreshBestSellers: 'refresh-best-sellers',
} as const

export interface DeliveryJob {
  delivery_id: string
  /** The attempt's number over the delivery's life (1, 2, …): names the job, numbers the log. */
  attempt: number
  /** 0 for a first try or a redelivery, then 1, 2, 3 for the scheduled retries. */
  retry: number
}

export interface NotificationJob {
  notification_id: string
  /** The attempt's number over the notification's life (1, 2, …): names the job, numbers the log. */
  attempt: number
  /** 0 for a first try or a resend, then 1, 2, 3 for the scheduled retries. */
  retry: number
}
