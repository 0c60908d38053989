/**
 * Webhook subscriptions: each endpoint's health (failures in a row, last success and failure,
 * disabled and why), its delivery log with every attempt's status code, time and answer, a
 * redelivery of any delivery, and a replay of a time window (failed or missing deliveries).
 */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState, type FormEvent } from 'react'
import { Link, useNavigate, useParams } from 'react-router'
import { client, type Schemas } from '../api'
import { Badge, CursorPager, currentCursor, DateTime, Facts, nextCursorOf } from '../components/data'
import { DialogButton } from '../components/dialog'
import { ErrorNotice, QueryState, SuccessNotice } from '../components/feedback'
import { CheckboxField, formText, SelectField, SubmitButton, TextField } from '../components/forms'
import { Page, Section } from '../components/page'
import { dateTimeInputValue } from '../form-values'

type Webhook = Schemas['Webhook']
type Delivery = Schemas['WebhookDelivery']

type EventKind = Exclude<Schemas['CreateWebhookRequest']['events'][number], '*'>

/** Every kind a subscription can name, by family (the compiler checks the list against the contract). */
const KINDS_BY_FAMILY = {
  Orders: ['order.created', 'order.paid', 'order.shipped', 'order.completed', 'order.cancelled', 'order.refunded', 'order.edited'],
  Payments: ['payment.authorized', 'payment.succeeded', 'payment.failed', 'payment.canceled', 'payment.refunded', 'refund.failed'],
  Returns: ['return.requested', 'return.approved', 'return.declined', 'return.received', 'return.canceled'],
  'Draft orders': ['draft_order.invoice_sent'],
  Inventory: ['inventory.adjusted', 'inventory.low'],
  Products: ['product.created', 'product.updated'],
  Collections: ['collection.created', 'collection.updated', 'collection.deleted'],
  Customers: ['customer.created'],
  Accounts: [
    'account.activated',
    'account.verification_requested',
    'account.email_verified',
    'account.password_reset_requested',
    'account.password_changed',
    'account.email_change_requested',
    'account.email_changed',
  ],
  Webhooks: ['webhook.disabled'],
} as const satisfies Record<string, readonly EventKind[]>
// A kind added to the contract and missing above fails to compile here.
const everyKindListed: Exclude<EventKind, (typeof KINDS_BY_FAMILY)[keyof typeof KINDS_BY_FAMILY][number]> extends never ? true : never = true
void everyKindListed

/** An endpoint's state in one word: disabled, inactive, failing or healthy. */
function health(webhook: Webhook): { value: string; label: string } {
  if (webhook.disabled_at) return { value: 'disabled', label: 'disabled' }
  if (!webhook.is_active) return { value: 'inactive', label: 'inactive' }
  if (webhook.consecutive_failures > 0) return { value: 'failed', label: `failing (${webhook.consecutive_failures} in a row)` }
  return { value: 'active', label: 'healthy' }
}

export function Webhooks() {
  const webhooks = useQuery({ queryKey: ['webhooks', 'list'], queryFn: () => client.listWebhooks({ per_page: 100 }) })
  const [secret, setSecret] = useState<{ url: string; secret: string }>()
  return (
    <Page
      title="Webhooks"
      actions={
        <DialogButton label="New webhook" title="New webhook" className="button button-primary">
          {(close) => <CreateWebhook onCreated={(created) => (close(), setSecret(created))} />}
        </DialogButton>
      }
    >
      {secret ? (
        <div className="notice notice-success" role="status">
          <p>
            Subscribed {secret.url}. Its signing secret, shown only now: <code className="code">{secret.secret}</code>
          </p>
        </div>
      ) : null}
      <QueryState query={webhooks} what="webhooks">
        {({ webhooks: rows }) =>
          rows.length === 0 ? (
            <p className="empty">No webhook yet.</p>
          ) : (
            <div className="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Endpoint</th>
                    <th scope="col">Events</th>
                    <th scope="col">Health</th>
                    <th scope="col">Last success</th>
                    <th scope="col">Last failure</th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map((webhook) => {
                    const state = health(webhook)
                    return (
                      <tr key={webhook.id}>
                        <td>
                          <Link to={`/webhooks/${webhook.id}`}>{webhook.url}</Link>
                          {webhook.description ? <div className="muted small">{webhook.description}</div> : null}
                        </td>
                        <td className="code">{webhook.events.join(', ')}</td>
                        <td>
                          <Badge value={state.value} label={state.label} />
                        </td>
                        <td>
                          <DateTime value={webhook.last_success_at} />
                        </td>
                        <td>
                          <DateTime value={webhook.last_failure_at} />
                        </td>
                      </tr>
                    )
                  })}
                </tbody>
              </table>
            </div>
          )
        }
      </QueryState>
    </Page>
  )
}

function CreateWebhook({ onCreated }: { onCreated(created: { url: string; secret: string }): void }) {
  const queryClient = useQueryClient()
  const [noEvents, setNoEvents] = useState(false)
  const create = useMutation({
    mutationFn: (body: Schemas['CreateWebhookRequest']) => client.createWebhook(body),
    onSuccess: (created) => {
      void queryClient.invalidateQueries({ queryKey: ['webhooks'] })
      onCreated({ url: created.url, secret: created.secret })
    },
  })
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault()
    const form = new FormData(event.currentTarget)
    const chosen = form.getAll('events').map(String) as Schemas['CreateWebhookRequest']['events']
    setNoEvents(chosen.length === 0)
    if (chosen.length === 0) return
    // Every event covers the rest.
    create.mutate({ url: String(form.get('url')), events: chosen.includes('*') ? ['*'] : chosen, description: String(form.get('description') || '') || null })
  }
  return (
    <form className="form" onSubmit={submit}>
      <ErrorNotice error={create.error} />
      <TextField label="Endpoint URL" name="url" type="url" required placeholder="https://example.com/hooks/commerce" />
      <TextField label="Description" name="description" maxLength={500} />
      <fieldset className="fieldset" aria-describedby={noEvents ? 'events-error' : undefined}>
        <legend>Events</legend>
        <CheckboxField label="Every event (*), those added later included" name="events" value="*" defaultChecked />
        {Object.entries(KINDS_BY_FAMILY).map(([family, kinds]) => (
          <fieldset key={family} className="fieldset">
            <legend>{family}</legend>
            {kinds.map((kind) => (
              <CheckboxField key={kind} label={kind} name="events" value={kind} />
            ))}
          </fieldset>
        ))}
        {noEvents ? (
          <p className="field-error" id="events-error">
            Choose at least one
          </p>
        ) : null}
      </fieldset>
      <SubmitButton pending={create.isPending}>Create webhook</SubmitButton>
    </form>
  )
}

export function WebhookDetail() {
  const { id = '' } = useParams()
  // Its health moves with the worker's deliveries, as the log below does: both are read again.
  const webhook = useQuery({ queryKey: ['webhooks', id], queryFn: () => client.getWebhook(id), refetchInterval: 5_000 })
  const [done, setDone] = useState<string>()
  return (
    <QueryState query={webhook} what="the webhook">
      {(data) => (
        <Page title={`Webhook ${data.url}`} back={<Link to="/webhooks">← Webhooks</Link>} actions={<WebhookActions webhook={data} onDone={setDone} />}>
          <SuccessNotice>{done}</SuccessNotice>
          <Health webhook={data} />
          <Deliveries webhookId={data.id} onDone={setDone} />
        </Page>
      )}
    </QueryState>
  )
}

function WebhookActions({ webhook, onDone }: { webhook: Webhook; onDone(message: string): void }) {
  const queryClient = useQueryClient()
  const navigate = useNavigate()
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['webhooks'] })
  const enable = useMutation({ mutationFn: () => client.enableWebhook(webhook.id), onSuccess: () => (void refresh(), onDone('Enabled: deliveries resume.')) })
  const pause = useMutation({
    mutationFn: (active: boolean) => client.updateWebhook(webhook.id, { is_active: active }),
    onSuccess: (_answer, active) => (void refresh(), onDone(active ? 'Resumed.' : 'Paused: no new deliveries until resumed.')),
  })
  const remove = useMutation({ mutationFn: () => client.deleteWebhook(webhook.id), onSuccess: () => (void refresh(), navigate('/webhooks')) })
  return (
    <>
      {webhook.disabled_at ? (
        <button type="button" className="button button-primary" disabled={enable.isPending} onClick={() => enable.mutate()}>
          Enable
        </button>
      ) : (
        <button type="button" className="button" disabled={pause.isPending} onClick={() => pause.mutate(!webhook.is_active)}>
          {webhook.is_active ? 'Pause' : 'Resume'}
        </button>
      )}
      <DialogButton label="Replay events" title="Replay events">
        {(close) => <ReplayForm webhookId={webhook.id} onDone={(message) => (close(), onDone(message))} />}
      </DialogButton>
      <button
        type="button"
        className="button button-danger"
        disabled={remove.isPending}
        onClick={() => window.confirm(`Delete the webhook to ${webhook.url}? Its delivery log goes with it.`) && remove.mutate()}
      >
        Delete
      </button>
      <ErrorNotice error={enable.error ?? pause.error ?? remove.error} />
    </>
  )
}

function Health({ webhook }: { webhook: Webhook }) {
  const state = health(webhook)
  return (
    <Section title="Endpoint health">
      <Facts
        facts={[
          ['State', <Badge value={state.value} label={state.label} />],
          ['Failures in a row', String(webhook.consecutive_failures)],
          ['Failing since', <DateTime value={webhook.failing_since} />],
          ['Last success', <DateTime value={webhook.last_success_at} />],
          ['Last failure', <DateTime value={webhook.last_failure_at} />],
          ['Disabled', webhook.disabled_at ? <>{webhook.disabled_reason ?? 'yes'} (<DateTime value={webhook.disabled_at} />)</> : 'no'],
          ['Events', <span className="code">{webhook.events.join(', ')}</span>],
          ['Created', <DateTime value={webhook.created_at} />],
        ]}
      />
    </Section>
  )
}

const DELIVERY_STATES = ['pending', 'succeeded', 'failed'] as const

function Deliveries({ webhookId, onDone }: { webhookId: string; onDone(message: string): void }) {
  const [status, setStatus] = useState<(typeof DELIVERY_STATES)[number] | ''>('')
  const [cursors, setCursors] = useState<string[]>([])
  const deliveries = useQuery({
    queryKey: ['webhooks', webhookId, 'deliveries', status, cursors],
    queryFn: () => client.listWebhookDeliveries(webhookId, { status: status || undefined, after: currentCursor(cursors), per_page: 25 }),
    placeholderData: keepPreviousData,
    // Retries are scheduled by the worker: the log moves without an event of its own.
    refetchInterval: 5_000,
  })
  return (
    <Section title="Delivery log">
      <div className="filters">
        <SelectField
          label="Deliveries"
          value={status}
          onChange={(event) => (setStatus(event.target.value as typeof status), setCursors([]))}
          options={[['', 'All'], ...DELIVERY_STATES.map((state) => [state, state] as const)]}
        />
      </div>
      <QueryState query={deliveries} what="deliveries">
        {({ deliveries: rows, meta }) => (
          <>
            {rows.length === 0 ? (
              <p className="empty">No delivery.</p>
            ) : (
              <div className="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Event</th>
                      <th scope="col">Status</th>
                      <th scope="col" className="number">Attempts</th>
                      <th scope="col">Last answer</th>
                      <th scope="col">Next attempt</th>
                      <th scope="col">Created</th>
                      <th scope="col">
                        <span className="visually-hidden">Actions</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((delivery) => (
                      <DeliveryRow key={delivery.id} webhookId={webhookId} delivery={delivery} onDone={onDone} />
                    ))}
                  </tbody>
                </table>
              </div>
            )}
            <CursorPager label="Deliveries" cursors={cursors} nextCursor={nextCursorOf(meta)} onChange={setCursors} />
          </>
        )}
      </QueryState>
    </Section>
  )
}

function DeliveryRow({ webhookId, delivery, onDone }: { webhookId: string; delivery: Delivery; onDone(message: string): void }) {
  const queryClient = useQueryClient()
  const redeliver = useMutation({
    mutationFn: () => client.redeliverWebhookDelivery(webhookId, delivery.id),
    onSuccess: () => (void queryClient.invalidateQueries({ queryKey: ['webhooks'] }), onDone(`Delivery of ${delivery.event} queued again.`)),
  })
  const last = delivery.attempt_log.at(-1)
  return (
    <tr aria-label={`Delivery of ${delivery.event}`}>
      <td>
        <span className="code">{delivery.event}</span>
        <details>
          <summary>Attempts</summary>
          {delivery.attempt_log.length === 0 ? <p className="muted small">None yet.</p> : null}
          <ol className="small">
            {delivery.attempt_log.map((attempt) => (
              <li key={attempt.attempt}>
                <DateTime value={attempt.created_at} /> — {attempt.succeeded ? 'succeeded' : 'failed'}
                {attempt.status_code ? `, HTTP ${attempt.status_code}` : ''}, {attempt.duration_ms} ms
                {attempt.error ? `: ${attempt.error}` : ''}
                {attempt.response_body ? <pre className="code">{attempt.response_body}</pre> : null}
              </li>
            ))}
          </ol>
        </details>
      </td>
      <td>
        <Badge value={delivery.status} />
      </td>
      <td className="number">{delivery.attempts}</td>
      <td>{delivery.last_status_code ?? (last?.error ? 'no answer' : '—')}</td>
      <td>
        <DateTime value={delivery.next_attempt_at} />
      </td>
      <td>
        <DateTime value={delivery.created_at} />
      </td>
      <td>
        <button type="button" className="button" disabled={redeliver.isPending || delivery.status === 'pending'} onClick={() => redeliver.mutate()}>
          Redeliver
        </button>
        <ErrorNotice error={redeliver.error} />
      </td>
    </tr>
  )
}

const deliveries = (count: number) => `${count} ${count === 1 ? 'delivery' : 'deliveries'}`

/** A day-and-time input's value (the viewer's time zone) as ISO 8601 UTC. */
const isoOf = (local: string | undefined) => new Date(local ?? '').toISOString()
/** A moment as a day-and-time input shows it, in the viewer's time zone. */
function ReplayForm({ webhookId, onDone }: { webhookId: string; onDone(message: string): void }) {
  const queryClient = useQueryClient()
  const [preview, setPreview] = useState<Schemas['WebhookReplay']>()
  const replay = useMutation({
    mutationFn: (body: Schemas['ReplayWebhookRequest']) => client.replayWebhookEvents(webhookId, body),
    onSuccess: (answer) => {
      if (answer.dry_run) return setPreview(answer)
      void queryClient.invalidateQueries({ queryKey: ['webhooks'] })
      onDone(`${deliveries(answer.replayed)} queued (${answer.created} of them for missing events).`)
    },
  })
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault()
    const submitter = (event.nativeEvent as SubmitEvent).submitter as HTMLButtonElement | null
    const values = formText(event.currentTarget)
    const form = new FormData(event.currentTarget)
    const status = form.getAll('status').map(String) as NonNullable<Schemas['ReplayWebhookRequest']['status']>
    replay.mutate({ from: isoOf(values.from), to: isoOf(values.to), status: status.length ? status : undefined, dry_run: submitter?.value === 'count' })
  }
  return (
    <form className="form" onSubmit={submit}>
      <ErrorNotice error={replay.error} />
      <div className="form-row">
        <TextField label="From" name="from" type="datetime-local" required defaultValue={dateTimeInputValue(new Date(Date.now() - 86_400_000))} />
        <TextField label="Until" name="to" type="datetime-local" required defaultValue={dateTimeInputValue(new Date(Date.now() + 60_000))} />
      </div>
      <fieldset className="card">
        <legend>Deliveries to send again</legend>
        <CheckboxField label="Failed" name="status" value="failed" defaultChecked />
        <CheckboxField label="Missing (events made while the endpoint was paused or before it existed)" name="status" value="missing" />
        <CheckboxField label="Succeeded" name="status" value="succeeded" />
      </fieldset>
      {preview ? (
        <p className="notice notice-info" role="status">
          {deliveries(preview.matched)} {preview.matched === 1 ? 'matches' : 'match'}.
        </p>
      ) : null}
      <div className="actions">
        <button type="submit" name="action" value="count" className="button" disabled={replay.isPending}>
          Count
        </button>
        <SubmitButton pending={replay.isPending}>Replay</SubmitButton>
      </div>
    </form>
  )
}
