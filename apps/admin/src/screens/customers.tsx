/** Customers: the searchable list, and one customer's details, orders and saved addresses. */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState, type FormEvent } from 'react'
import { Link, useParams, useSearchParams } from 'react-router'
import { client, type Schemas } from '../api'
import { Badge, CursorPager, currentCursor, DateTime, Facts, nextCursorOf, PagePager } from '../components/data'
import { DialogButton } from '../components/dialog'
import { ErrorNotice, QueryState, SuccessNotice } from '../components/feedback'
import { CheckboxField, formText, orNull, orUndefined, SubmitButton, TextField } from '../components/forms'
import { Page, Section } from '../components/page'
import { OrdersTable } from './orders'

type Customer = Schemas['Customer']
type CustomerAddress = Schemas['CustomerAddress']
type NewAddress = Schemas['CreateAddressRequest']

const fullName = (person: { first_name: string | null; last_name: string | null }) =>
  [person.first_name, person.last_name].filter(Boolean).join(' ')

function OrDash({ text }: { text: string | null | undefined }) {
  return text ? <>{text}</> : <span className="muted">—</span>
}

export function Customers() {
  // The search and the cursors walked live in the URL, so that coming back from a customer shows the same page.
  const [params, setParams] = useSearchParams()
  const search = params.get('search') ?? ''
  const cursors = params.getAll('after')
  const customers = useQuery({
    queryKey: ['customers', 'list', search, cursors],
    queryFn: () => client.listCustomers({ search: orUndefined(search), after: currentCursor(cursors) }),
    placeholderData: keepPreviousData,
  })

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault()
    const wanted = orUndefined(formText(event.currentTarget).search)
    setParams(wanted ? { search: wanted } : {})
  }

  return (
    <Page title="Customers">
      {/* Keyed by the search: the field shows the URL's search after back and forward too. */}
      <form className="filters" role="search" onSubmit={submit} key={search}>
        <TextField label="Search customers" name="search" type="search" defaultValue={search} maxLength={200} />
        <button type="submit" className="button">
          Search
        </button>
      </form>
      <div className="card">
        <QueryState query={customers} what="customers">
          {({ customers: rows, meta }) =>
            rows.length === 0 ? (
              <p className="empty">{search ? 'No customer matches this search.' : 'No customers yet.'}</p>
            ) : (
              <>
                <div className="table-wrap">
                  <table>
                    <thead>
                      <tr>
                        <th scope="col">Name</th>
                        <th scope="col">Email</th>
                        <th scope="col">Phone</th>
                        <th scope="col">Created</th>
                      </tr>
                    </thead>
                    <tbody>
                      {rows.map((customer) => (
                        <tr key={customer.id}>
                          <td>
                            <OrDash text={fullName(customer)} />
                          </td>
                          <td>
                            <Link to={`/customers/${customer.id}`}>{customer.email}</Link>
                          </td>
                          <td>
                            <OrDash text={customer.phone} />
                          </td>
                          <td>
                            <DateTime value={customer.created_at} />
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
                <CursorPager
                  label="Customers"
                  cursors={cursors}
                  nextCursor={nextCursorOf(meta)}
                  onChange={(next) => setParams({ ...(search ? { search } : {}), after: next })}
                />
              </>
            )
          }
        </QueryState>
      </div>
    </Page>
  )
}

export function CustomerDetail() {
  const { id = '' } = useParams()
  const [notice, setNotice] = useState('')
  const customer = useQuery({ queryKey: ['customers', id], queryFn: () => client.getCustomer(id) })
  const data = customer.data

  return (
    <Page
      title={data ? fullName(data) || data.email : 'Customer'}
      back={<Link to="/customers">All customers</Link>}
      actions={
        data ? (
          <DialogButton label="Edit customer" title="Edit customer">
            {(close) => <EditCustomer customer={data} close={close} onSaved={setNotice} />}
          </DialogButton>
        ) : null
      }
    >
      <SuccessNotice>{notice}</SuccessNotice>
      <QueryState query={customer} what="the customer">
        {(loaded) => (
          <>
            <Section title="Details">
              <Facts
                facts={[
                  ['Email', loaded.email],
                  ['Name', <OrDash text={fullName(loaded)} />],
                  ['Phone', <OrDash text={loaded.phone} />],
                  ['Created', <DateTime value={loaded.created_at} />],
                ]}
              />
            </Section>
            <CustomerOrders customerId={loaded.id} />
            <CustomerAddresses customerId={loaded.id} />
          </>
        )}
      </QueryState>
    </Page>
  )
}

function EditCustomer({ customer, close, onSaved }: { customer: Customer; close(): void; onSaved(message: string): void }) {
  const queryClient = useQueryClient()
  const update = useMutation({
    mutationFn: (body: Schemas['UpdateCustomerRequest']) => client.updateCustomer(customer.id, body),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['customers'] })
      close()
      onSaved('Customer saved.')
    },
  })

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault()
    const values = formText(event.currentTarget)
    // Emptied fields are sent as null: the API clears them.
    update.mutate({ first_name: orNull(values.first_name), last_name: orNull(values.last_name), phone: orNull(values.phone) })
  }

  return (
    <form className="form" onSubmit={submit}>
      <ErrorNotice error={update.error} />
      <div className="form-row">
        <TextField label="First name" name="first_name" defaultValue={customer.first_name ?? ''} maxLength={100} autoComplete="off" />
        <TextField label="Last name" name="last_name" defaultValue={customer.last_name ?? ''} maxLength={100} autoComplete="off" />
      </div>
      <TextField label="Phone" name="phone" type="tel" defaultValue={customer.phone ?? ''} maxLength={40} autoComplete="off" />
      <div className="actions">
        <SubmitButton pending={update.isPending}>Save</SubmitButton>
        <button type="button" className="button" onClick={close}>
          Cancel
        </button>
      </div>
    </form>
  )
}

function CustomerOrders({ customerId }: { customerId: string }) {
  const [cursors, setCursors] = useState<string[]>([])
  const after = currentCursor(cursors)
  const orders = useQuery({
    queryKey: ['orders', 'customer', customerId, after],
    queryFn: () => client.listOrders({ customer_id: customerId, after }),
    placeholderData: keepPreviousData,
  })

  return (
    <Section title="Orders">
      <QueryState query={orders} what="the customer’s orders">
        {({ orders: rows, meta }) =>
          rows.length === 0 && cursors.length === 0 ? (
            <p className="empty">No orders yet.</p>
          ) : (
            <>
              <OrdersTable orders={rows} caption="The customer’s orders, newest first" />
              <CursorPager label="Orders" cursors={cursors} nextCursor={nextCursorOf(meta)} onChange={setCursors} />
            </>
          )
        }
      </QueryState>
    </Section>
  )
}

function CustomerAddresses({ customerId }: { customerId: string }) {
  const queryClient = useQueryClient()
  const [page, setPage] = useState(1)
  const [notice, setNotice] = useState('')
  const addresses = useQuery({
    queryKey: ['customers', customerId, 'addresses', page],
    queryFn: () => client.listCustomerAddresses(customerId, { page }),
    placeholderData: keepPreviousData,
  })
  const remove = useMutation({
    mutationFn: (address: CustomerAddress) => client.deleteCustomerAddress(customerId, address.id),
    onMutate: () => setNotice(''),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['customers'] })
      setNotice('Address deleted.')
    },
  })

  function confirmRemove(address: CustomerAddress) {
    if (window.confirm(`Delete the address ${address.line1}, ${address.city}?`)) remove.mutate(address)
  }

  return (
    <Section
      title="Addresses"
      actions={
        <DialogButton label="Add address" title="New address" className="button button-primary">
          {(close) => <NewAddressForm customerId={customerId} close={close} onSaved={setNotice} />}
        </DialogButton>
      }
    >
      <SuccessNotice>{notice}</SuccessNotice>
      <ErrorNotice error={remove.error} title="Could not delete the address" />
      <QueryState query={addresses} what="the addresses">
        {({ addresses: rows, meta }) =>
          rows.length === 0 ? (
            <p className="empty">No saved addresses.</p>
          ) : (
            <>
              <div className="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">Address</th>
                      <th scope="col">Phone</th>
                      <th scope="col">Default for</th>
                      <th scope="col">Actions</th>
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((address) => (
                      <tr key={address.id}>
                        <td>
                          <OrDash text={[fullName(address), address.company].filter(Boolean).join(', ')} />
                        </td>
                        <td>{addressText(address)}</td>
                        <td>
                          <OrDash text={address.phone} />
                        </td>
                        <td>
                          <span className="actions">
                            {address.is_default_shipping ? <Badge value="default" label="Shipping" /> : null}
                            {address.is_default_billing ? <Badge value="default" label="Billing" /> : null}
                            {address.is_default_shipping || address.is_default_billing ? null : <span className="muted">—</span>}
                          </span>
                        </td>
                        <td>
                          <button
                            type="button"
                            className="button button-danger"
                            disabled={remove.isPending && remove.variables.id === address.id}
                            onClick={() => confirmRemove(address)}
                          >
                            Delete
                          </button>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <PagePager label="Addresses" meta={meta} onChange={setPage} />
            </>
          )
        }
      </QueryState>
    </Section>
  )
}

const addressText = (address: CustomerAddress) =>
  [address.line1, address.line2, [address.postal_code, address.city].filter(Boolean).join(' '), address.region, address.country]
    .filter(Boolean)
    .join(', ')

function NewAddressForm({ customerId, close, onSaved }: { customerId: string; close(): void; onSaved(message: string): void }) {
  const queryClient = useQueryClient()
  const [countryError, setCountryError] = useState<string>()
  const create = useMutation({
    mutationFn: (body: NewAddress) => client.createCustomerAddress(customerId, body),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['customers'] })
      close()
      onSaved('Address added.')
    },
  })

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault()
    const values = formText(event.currentTarget)
    const country = (values.country ?? '').trim().toUpperCase()
    const wrongCountry = /^[A-Z]{2}$/.test(country) ? undefined : 'Enter the two-letter country code, such as DE'
    setCountryError(wrongCountry)
    if (wrongCountry) return
    create.mutate({
      first_name: orNull(values.first_name),
      last_name: orNull(values.last_name),
      company: orNull(values.company),
      line1: values.line1?.trim() ?? '',
      line2: orNull(values.line2),
      city: values.city?.trim() ?? '',
      region: orNull(values.region),
      postal_code: orNull(values.postal_code),
      // Well-formed here; the API checks it is an assigned ISO 3166-1 code and names the field if not.
      country: country as NewAddress['country'],
      phone: orNull(values.phone),
      // Sent only when ticked: with neither flag the customer's first address becomes both defaults.
      is_default_shipping: values.is_default_shipping ? true : undefined,
      is_default_billing: values.is_default_billing ? true : undefined,
    })
  }

  return (
    <form className="form" onSubmit={submit}>
      <ErrorNotice error={create.error} />
      <div className="form-row">
        <TextField label="First name" name="first_name" maxLength={100} autoComplete="off" />
        <TextField label="Last name" name="last_name" maxLength={100} autoComplete="off" />
      </div>
      <TextField label="Company" name="company" maxLength={200} autoComplete="off" />
      <TextField label="Address line 1" name="line1" required maxLength={200} autoComplete="off" />
      <TextField label="Address line 2" name="line2" maxLength={200} autoComplete="off" />
      <div className="form-row">
        <TextField label="Postal code" name="postal_code" maxLength={20} autoComplete="off" />
        <TextField label="City" name="city" required maxLength={100} autoComplete="off" />
      </div>
      <div className="form-row">
        <TextField label="Region" name="region" maxLength={100} autoComplete="off" />
        <TextField label="Country" name="country" required maxLength={2} hint="Two-letter ISO code, such as DE" error={countryError} autoComplete="off" />
      </div>
      <TextField label="Phone" name="phone" type="tel" maxLength={40} autoComplete="off" />
      <CheckboxField label="Default shipping address" name="is_default_shipping" />
      <CheckboxField label="Default billing address" name="is_default_billing" hint="The first address becomes both defaults when neither is ticked." />
      <div className="actions">
        <SubmitButton pending={create.isPending}>Create</SubmitButton>
        <button type="button" className="button" onClick={close}>
          Cancel
        </button>
      </div>
    </form>
  )
}
