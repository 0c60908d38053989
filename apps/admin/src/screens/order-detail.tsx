/**
 * One order: its lines and totals, payments with their refunds, fulfillments, returns and history,
 * and what staff do to it: fulfil, capture, refund, cancel. Every action states its amount in the
 * order's currency and is checked by the API; the screen refreshes from the answer and the events.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState, type FormEvent } from 'react'
import { Link, useParams } from 'react-router'
import { client, type Schemas } from '../api'
import { Badge, DateTime, Facts, Money } from '../components/data'
import { DialogButton } from '../components/dialog'
import { ErrorNotice, QueryState, SuccessNotice } from '../components/feedback'
import { formText, SubmitButton, TextField } from '../components/forms'
import { Page, Section } from '../components/page'
import { moneyInputValue, parseMoney } from '../money'

type Order = Schemas['Order']
type Payment = Schemas['Payment']

export function OrderDetail() {
  const { id = '' } = useParams()
  const order = useQuery({ queryKey: ['orders', id], queryFn: () => client.getOrder(id) })
  const [done, setDone] = useState<string>()
  return (
    <QueryState query={order} what="the order">
      {(data) => (
        <Page
          title={`Order ${data.order_number}`}
          back={<Link to="/orders">← Orders</Link>}
          actions={<OrderActions order={data} onDone={setDone} />}
        >
          <SuccessNotice>{done}</SuccessNotice>
          <Summary order={data} />
          <Lines order={data} />
          <Payments order={data} onDone={setDone} />
          <Fulfillments order={data} />
          <Returns orderId={data.id} currency={data.currency} />
          <History orderId={data.id} currency={data.currency} />
        </Page>
      )}
    </QueryState>
  )
}

/**
 * After an action: the order, and the lists that show it, are fetched again. Not awaited: the
 * caller's own onSuccess (close the dialog, say what was done) runs first, while the button that
 * opened the dialog is still there (the refreshed order may not show it any more).
 */
function useOrderMutation<Input>(action: (input: Input) => Promise<unknown>) {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: action,
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['orders'] })
    },
  })
}

function OrderActions({ order, onDone }: { order: Order; onDone(message: string): void }) {
  const remaining = order.items.filter((item) => item.quantity - item.fulfilled_quantity - item.canceled_quantity > 0)
  const cancelable = ['pending', 'paid'].includes(order.status) && order.fulfillment_status === 'unfulfilled'
  const cancel = useOrderMutation(() => client.cancelOrder(order.id))
  return (
    <>
      {remaining.length > 0 && order.status !== 'cancelled' ? (
        <DialogButton label="Fulfil" title={`Fulfil order ${order.order_number}`} className="button button-primary">
          {(close) => <FulfilForm order={order} onDone={() => (close(), onDone('Fulfillment created.'))} />}
        </DialogButton>
      ) : null}
      {cancelable ? (
        <button
          type="button"
          className="button button-danger"
          disabled={cancel.isPending}
          onClick={() => {
            if (window.confirm(`Cancel order ${order.order_number}? Its stock is released and any payment refunded.`)) {
              cancel.mutate(undefined, { onSuccess: () => onDone('Order cancelled.') })
            }
          }}
        >
          Cancel order
        </button>
      ) : null}
      <ErrorNotice error={cancel.error} title="Could not cancel" />
    </>
  )
}

function FulfilForm({ order, onDone }: { order: Order; onDone(): void }) {
  const lines = order.items.filter((item) => item.quantity - item.fulfilled_quantity - item.canceled_quantity > 0)
  const fulfil = useOrderMutation((body: Schemas['CreateFulfillmentRequest']) => client.createFulfillment(order.id, body))
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault()
    const values = formText(event.currentTarget)
    const items = lines
      .map((line) => ({ order_item_id: line.id, quantity: Number(values[`quantity-${line.id}`] ?? 0) }))
      .filter((item) => item.quantity > 0)
    fulfil.mutate(
      { carrier: values.carrier!, tracking_number: values.tracking_number!, tracking_url: values.tracking_url || null, items },
      { onSuccess: onDone },
    )
  }
  return (
    <form className="form" onSubmit={submit}>
      <ErrorNotice error={fulfil.error} />
      <div className="form-row">
        <TextField label="Carrier" name="carrier" required maxLength={100} />
        <TextField label="Tracking number" name="tracking_number" required maxLength={100} />
      </div>
      <TextField label="Tracking URL" name="tracking_url" type="url" hint="Optional: the carrier’s page for this parcel" />
      <fieldset className="card">
        <legend>Units to send</legend>
        {lines.map((line) => {
          const left = line.quantity - line.fulfilled_quantity - line.canceled_quantity
          return (
            <TextField
              key={line.id}
              label={`${line.title}${line.variant_title ? ` — ${line.variant_title}` : ''}`}
              name={`quantity-${line.id}`}
              type="number"
              min={0}
              max={left}
              defaultValue={left}
              hint={`${left} not yet sent`}
            />
          )
        })}
      </fieldset>
      <SubmitButton pending={fulfil.isPending}>Create fulfillment</SubmitButton>
    </form>
  )
}

function Summary({ order }: { order: Order }) {
  const money = (amount: number) => <Money amount={amount} currency={order.currency} />
  const address = order.shipping_address
  return (
    <div className="grid-2">
      <Section title="Summary">
        <Facts
          facts={[
            ['Status', <Badge value={order.status} />],
            ['Payment', <Badge value={order.payment_status} />],
            ['Fulfillment', <Badge value={order.fulfillment_status} />],
            ['Placed', <DateTime value={order.created_at} />],
            ['Customer', order.customer_id ? <Link to={`/customers/${order.customer_id}`}>{order.email}</Link> : order.email],
            ['Shipping method', order.shipping_method ? `${order.shipping_method.name}` : '—'],
            [
              'Ship to',
              address
                ? [[address.first_name, address.last_name].filter(Boolean).join(' '), address.line1, address.line2, [address.postal_code, address.city].filter(Boolean).join(' '), address.country]
                    .filter(Boolean)
                    .join(', ')
                : '—',
            ],
          ]}
        />
      </Section>
      <Section title="Totals">
        <Facts
          facts={[
            ['Subtotal', money(order.totals.subtotal)],
            ['Discount', money(order.totals.discount)],
            ['Shipping', money(order.totals.shipping)],
            ['Tax', money(order.totals.tax)],
            ['Total', money(order.totals.total)],
            ['Paid', money(order.amount_paid)],
            ['Refunded', money(order.amount_refunded)],
            ['Owed', money(order.amount_owed)],
          ]}
        />
      </Section>
    </div>
  )
}

function Lines({ order }: { order: Order }) {
  return (
    <Section title="Lines">
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Item</th>
              <th scope="col">SKU</th>
              <th scope="col" className="number">Quantity</th>
              <th scope="col" className="number">Sent</th>
              <th scope="col" className="number">Returned</th>
              <th scope="col" className="number">Unit price</th>
              <th scope="col" className="number">Discount</th>
              <th scope="col" className="number">Tax</th>
              <th scope="col" className="number">Total</th>
            </tr>
          </thead>
          <tbody>
            {order.items.map((item) => (
              <tr key={item.id}>
                <td>
                  {item.product_id ? <Link to={`/products/${item.product_id}`}>{item.title}</Link> : item.title}
                  {item.variant_title ? <span className="muted"> — {item.variant_title}</span> : null}
                </td>
                <td>{item.sku ?? '—'}</td>
                <td className="number">{item.quantity}</td>
                <td className="number">{item.fulfilled_quantity}</td>
                <td className="number">{item.returned_quantity}</td>
                <td className="number">
                  <Money amount={item.unit_price} currency={order.currency} />
                </td>
                <td className="number">
                  <Money amount={item.discount} currency={order.currency} />
                </td>
                <td className="number">
                  <Money amount={item.tax} currency={order.currency} />
                </td>
                <td className="number">
                  <Money amount={item.total} currency={order.currency} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </Section>
  )
}

function Payments({ order, onDone }: { order: Order; onDone(message: string): void }) {
  return (
    <Section title="Payments">
      {order.payments.length === 0 ? <p className="empty">No payment yet.</p> : null}
      {order.payments.map((payment) => (
        <PaymentCard key={payment.id} order={order} payment={payment} onDone={onDone} />
      ))}
    </Section>
  )
}

function PaymentCard({ order, payment, onDone }: { order: Order; payment: Payment; onDone(message: string): void }) {
  // A partial capture releases the rest (docs/payments.md): only a whole authorization is capturable.
  const capturable = payment.status === 'authorized'
  const refundable = payment.amount_captured - payment.amount_refunded
  const cancelable = payment.status === 'authorized' && payment.amount_captured === 0
  const cancel = useOrderMutation(() => client.cancelPayment(payment.id))
  return (
    <article className="card" aria-label={`Payment ${payment.id}`}>
      <div className="card-header">
        <h3>
          <Money amount={payment.amount} currency={payment.currency} /> by {payment.method} ({payment.provider})
        </h3>
        <div className="card-actions">
          {capturable ? (
            <DialogButton label="Capture" title="Capture the payment">
              {(close) => (
                <AmountForm
                  order={order}
                  submitLabel="Capture"
                  initial={payment.amount - payment.amount_captured}
                  hint="Up to what was authorized and not yet captured"
                  action={(amount) => client.capturePayment(payment.id, { amount })}
                  onDone={() => (close(), onDone('Payment captured.'))}
                />
              )}
            </DialogButton>
          ) : null}
          {refundable > 0 ? (
            <DialogButton label="Refund" title="Refund the payment">
              {(close) => (
                <AmountForm
                  order={order}
                  submitLabel="Refund"
                  initial={refundable}
                  hint="Up to what was captured and not yet refunded"
                  withReason
                  action={(amount, reason) => client.createRefund(payment.id, { amount, reason: reason ?? null })}
                  onDone={() => (close(), onDone('Refund made.'))}
                />
              )}
            </DialogButton>
          ) : null}
          {cancelable ? (
            <button
              type="button"
              className="button button-danger"
              disabled={cancel.isPending}
              onClick={() => window.confirm('Void this authorization? The customer’s card is released.') && cancel.mutate(undefined, { onSuccess: () => onDone('Authorization voided.') })}
            >
              Void authorization
            </button>
          ) : null}
        </div>
      </div>
      <ErrorNotice error={cancel.error} />
      <Facts
        facts={[
          ['Status', <Badge value={payment.status} />],
          ['Captured', <Money amount={payment.amount_captured} currency={payment.currency} />],
          ['Refunded', <Money amount={payment.amount_refunded} currency={payment.currency} />],
          ['Created', <DateTime value={payment.created_at} />],
          ...(payment.failure_message ? ([['Failure', payment.failure_message]] as const) : []),
        ]}
      />
      {payment.refunds.length > 0 ? (
        <div className="table-wrap">
          <table>
            <caption>Refunds</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Reason</th>
                <th scope="col" className="number">Amount</th>
              </tr>
            </thead>
            <tbody>
              {payment.refunds.map((refund) => (
                <tr key={refund.id}>
                  <td>
                    <DateTime value={refund.created_at} />
                  </td>
                  <td>{refund.reason ?? '—'}</td>
                  <td className="number">
                    <Money amount={refund.amount} currency={refund.currency} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </article>
  )
}

/** An amount in the order's currency (exact: checked digit by digit), and a reason where one is asked. */
function AmountForm({
  order,
  initial,
  hint,
  submitLabel,
  withReason,
  action,
  onDone,
}: {
  order: Order
  initial: number
  hint: string
  submitLabel: string
  withReason?: boolean
  action(amount: number, reason?: string): Promise<unknown>
  onDone(): void
}) {
  const [invalid, setInvalid] = useState<string>()
  const mutation = useOrderMutation(({ amount, reason }: { amount: number; reason?: string }) => action(amount, reason))
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault()
    const values = formText(event.currentTarget)
    const parsed = parseMoney(values.amount ?? '', order.currency)
    if (!parsed.ok) return setInvalid(parsed.message)
    if (parsed.amount <= 0) return setInvalid('Enter an amount above zero')
    setInvalid(undefined)
    mutation.mutate({ amount: parsed.amount, reason: values.reason?.trim() || undefined }, { onSuccess: onDone })
  }
  return (
    <form className="form" onSubmit={submit} noValidate>
      <ErrorNotice error={mutation.error} />
      <TextField label={`Amount (${order.currency})`} name="amount" inputMode="decimal" defaultValue={moneyInputValue(initial, order.currency)} hint={hint} error={invalid} required />
      {withReason ? <TextField label="Reason" name="reason" maxLength={500} hint="Optional; kept with the refund" /> : null}
      <SubmitButton pending={mutation.isPending}>{submitLabel}</SubmitButton>
    </form>
  )
}

function Fulfillments({ order }: { order: Order }) {
  const titles = new Map(order.items.map((item) => [item.id, item.title]))
  return (
    <Section title="Fulfillments">
      {order.fulfillments.length === 0 ? (
        <p className="empty">Nothing sent yet.</p>
      ) : (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Sent</th>
                <th scope="col">Carrier</th>
                <th scope="col">Tracking</th>
                <th scope="col">Status</th>
                <th scope="col">Units</th>
              </tr>
            </thead>
            <tbody>
              {order.fulfillments.map((fulfillment) => (
                <tr key={fulfillment.id}>
                  <td>
                    <DateTime value={fulfillment.created_at} />
                  </td>
                  <td>{fulfillment.carrier}</td>
                  <td>
                    {fulfillment.tracking_url ? (
                      <a href={fulfillment.tracking_url} rel="noreferrer noopener" target="_blank">
                        {fulfillment.tracking_number}
                      </a>
                    ) : (
                      fulfillment.tracking_number
                    )}
                  </td>
                  <td>
                    <Badge value={fulfillment.status} />
                  </td>
                  <td>{fulfillment.items.map((item) => `${item.quantity} × ${titles.get(item.order_item_id) ?? item.order_item_id}`).join(', ')}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Section>
  )
}

function Returns({ orderId, currency }: { orderId: string; currency: string }) {
  const returns = useQuery({ queryKey: ['orders', orderId, 'returns'], queryFn: () => client.listOrderReturns(orderId) })
  return (
    <Section title="Returns">
      <QueryState query={returns} what="returns">
        {({ returns: rows }) =>
          rows.length === 0 ? (
            <p className="empty">No returns.</p>
          ) : (
            <div className="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Requested</th>
                    <th scope="col">Status</th>
                    <th scope="col">Items</th>
                    <th scope="col">Reason</th>
                    <th scope="col" className="number">Refunded</th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map((item) => (
                    <tr key={item.id}>
                      <td>
                        <DateTime value={item.created_at} />
                      </td>
                      <td>
                        <Badge value={item.status} />
                      </td>
                      <td>{item.items.map((line) => `${line.quantity} × ${line.title}`).join(', ')}</td>
                      <td>{item.reason ?? '—'}</td>
                      <td className="number">
                        <Money amount={item.amount_refunded} currency={currency} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </QueryState>
    </Section>
  )
}

function History({ orderId, currency }: { orderId: string; currency: string }) {
  const history = useQuery({ queryKey: ['orders', orderId, 'history'], queryFn: () => client.getOrderHistory(orderId, { per_page: 100 }) })
  return (
    <Section title="History">
      <QueryState query={history} what="the history">
        {({ history: entries }) => (
          <ol className="feed" aria-label="Order history, oldest first">
            {entries.map((entry) => (
              <li key={entry.event_id}>
                <DateTime value={entry.timestamp} />
                <span className="code">{entry.event}</span>
                <span>
                  {entry.actor ? `by ${entry.actor.type.replace('_', ' ')} ${entry.actor.id.slice(0, 8)}` : 'by the system'}
                  {entry.amount_captured > 0 ? (
                    <>
                      {' '}
                      · captured <Money amount={entry.amount_captured} currency={currency} />
                    </>
                  ) : null}
                  {entry.amount_refunded > 0 ? (
                    <>
                      {' '}
                      · refunded <Money amount={entry.amount_refunded} currency={currency} />
                    </>
                  ) : null}
                </span>
              </li>
            ))}
          </ol>
        )}
      </QueryState>
    </Section>
  )
}
