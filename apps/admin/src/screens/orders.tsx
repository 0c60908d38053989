/** Orders: filtered by state and date, newest first, a cursor page at a time; new orders appear live. */
import { keepPreviousData, useQuery } from '@tanstack/react-query'
import { useState, type FormEvent } from 'react'
import { Link } from 'react-router'
import { client, type Schemas } from '../api'
import { Badge, currentCursor, CursorPager, DateTime, Money, nextCursorOf } from '../components/data'
import { QueryState } from '../components/feedback'
import { formText, SelectField, TextField } from '../components/forms'
import { Page } from '../components/page'

const STATUSES = ['pending', 'paid', 'shipped', 'completed', 'cancelled', 'refunded'] as const
type Status = (typeof STATUSES)[number]

interface Filters {
  status?: Status
  created_from?: string
  created_to?: string
}

/** A date input's day as the start of that day in the viewer's time zone. */
const startOfDay = (day: string | undefined) => (day ? new Date(`${day}T00:00:00`).toISOString() : undefined)

export function Orders() {
  const [filters, setFilters] = useState<Filters>({})
  const [cursors, setCursors] = useState<string[]>([])
  const orders = useQuery({
    queryKey: ['orders', 'list', filters, cursors],
    queryFn: () => client.listOrders({ ...filters, per_page: 25, after: currentCursor(cursors) }),
    placeholderData: keepPreviousData,
  })

  function filter(event: FormEvent<HTMLFormElement>) {
    event.preventDefault()
    const values = formText(event.currentTarget)
    const to = values.created_to ? new Date(new Date(`${values.created_to}T00:00:00`).getTime() + 86_400_000).toISOString() : undefined
    setFilters({
      status: (values.status || undefined) as Status | undefined,
      created_from: startOfDay(values.created_from),
      created_to: to,
    })
    setCursors([])
  }

  return (
    <Page title="Orders">
      <form className="filters" onSubmit={filter} aria-label="Filter orders">
        <SelectField label="Status" name="status" options={[['', 'Any status'], ...STATUSES.map((status) => [status, status] as const)]} />
        <TextField label="Placed from" name="created_from" type="date" />
        <TextField label="Placed until" name="created_to" type="date" hint="Inclusive" />
        <button type="submit" className="button">
          Apply filters
        </button>
      </form>
      <QueryState query={orders} what="orders">
        {({ orders: rows, meta }) => (
          <>
            <OrdersTable orders={rows} caption="Orders, newest first" />
            {rows.length === 0 ? <p className="empty">No orders match.</p> : null}
            <CursorPager label="Orders" cursors={cursors} nextCursor={nextCursorOf(meta)} onChange={setCursors} />
          </>
        )}
      </QueryState>
    </Page>
  )
}

/** Orders as rows: number (to the order), date, customer, states and total; the customer's screen shows the same. */
export function OrdersTable({ orders, caption }: { orders: readonly Schemas['Order'][]; caption: string }) {
  return (
    <div className="table-wrap">
      <table>
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Order</th>
            <th scope="col">Placed</th>
            <th scope="col">Customer</th>
            <th scope="col">Status</th>
            <th scope="col">Payment</th>
            <th scope="col">Fulfillment</th>
            <th scope="col" className="number">
              Total
            </th>
          </tr>
        </thead>
        <tbody>
          {orders.map((order) => (
            <tr key={order.id}>
              <td>
                <Link to={`/orders/${order.id}`}>{order.order_number}</Link>
              </td>
              <td>
                <DateTime value={order.created_at} />
              </td>
              <td>{order.email}</td>
              <td>
                <Badge value={order.status} />
              </td>
              <td>
                <Badge value={order.payment_status} />
              </td>
              <td>
                <Badge value={order.fulfillment_status} />
              </td>
              <td className="number">
                <Money amount={order.totals.total} currency={order.currency} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}
