/**
 * The shop's settings: shipping methods, tax rates and stock locations, each made and changed in a
 * dialog; and where API keys and webhooks are managed instead.
 */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState, type FormEvent } from 'react'
import { Link } from 'react-router'
import { client, type Schemas } from '../api'
import { ActiveBadge, Badge, formatPercent, Money, PagePager } from '../components/data'
import { DialogButton } from '../components/dialog'
import { ErrorNotice, QueryState, SuccessNotice } from '../components/feedback'
import { CheckboxField, formText, orNull, SelectField, SubmitButton, TextField } from '../components/forms'
import { Page, Section } from '../components/page'
import { readCountries, readCountry, readCurrency, readMoney, readPercent, readWeight, readWhole, type Errors } from '../form-values'
import { moneyInputValue } from '../money'

type ShippingMethod = Schemas['ShippingMethod']
type TaxRate = Schemas['TaxRate']
type StockLocation = Schemas['StockLocation']

/** What a dialog's form gets: the row it edits (none: it creates one), and how to finish. */
interface FormProps<Row> {
  existing?: Row
  close(): void
  onSaved(message: string): void
}

export function Settings() {
  return (
    <Page title="Settings">
      <ShippingMethods />
      <TaxRates />
      <StockLocations />
      <Section title="API keys">
        <p className="notice notice-info">
          API keys are made, listed and revoked only with the CLI, by design: a key is a long-lived secret shown once, when it is made, and the
          dashboard never holds one. The commands work straight on the shop’s database (<code>DATABASE_URL</code>).
        </p>
        <ul>
          <li>
            <code>commerce api-keys create --name "ERP sync" --scopes products:read,orders:write</code> prints the new key once (options{' '}
            <code>--rate-limit</code>, <code>--expires-in 90d</code>).
          </li>
          <li>
            <code>commerce api-keys list</code> shows each key’s id, name, prefix, scopes and last use, never the key.
          </li>
          <li>
            <code>commerce api-keys revoke &lt;id&gt;</code>: the API refuses the key from its next request on.
          </li>
        </ul>
      </Section>
      <Section title="Webhooks">
        <p>
          <Link to="/webhooks">Webhooks, their delivery log and replay</Link> have a screen of their own.
        </p>
      </Section>
    </Page>
  )
}

function ShippingMethods() {
  const [page, setPage] = useState(1)
  const [notice, setNotice] = useState('')
  const methods = useQuery({
    queryKey: ['shipping', 'methods', page],
    queryFn: () => client.listShippingMethods({ page }),
    placeholderData: keepPreviousData,
  })
  const removal = useRemove('shipping', (id) => client.deleteShippingMethod(id), setNotice)

  return (
    <Section
      title="Shipping methods"
      actions={
        <DialogButton label="New shipping method" title="New shipping method" className="button button-primary">
          {(close) => <ShippingMethodForm close={close} onSaved={setNotice} />}
        </DialogButton>
      }
    >
      <SuccessNotice>{notice}</SuccessNotice>
      <ErrorNotice error={removal.error} title="Could not delete the shipping method" />
      <QueryState query={methods} what="shipping methods">
        {({ shipping_methods: rows, meta }) =>
          rows.length === 0 ? (
            <p className="empty">No shipping methods yet: checkouts cannot ship.</p>
          ) : (
            <>
              <div className="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">Countries</th>
                      <th scope="col" className="number">
                        Base price
                      </th>
                      <th scope="col" className="number">
                        Per kg
                      </th>
                      <th scope="col" className="number">
                        Free over
                      </th>
                      <th scope="col">Weight</th>
                      <th scope="col">Delivery</th>
                      <th scope="col">Active</th>
                      <th scope="col">Actions</th>
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((method) => (
                      <tr key={method.id}>
                        <td>{method.name}</td>
                        <td>{method.countries.length === 0 ? 'Everywhere' : method.countries.join(', ')}</td>
                        <td className="number">
                          <Money amount={method.base_price} currency={method.currency} />
                        </td>
                        <td className="number">
                          <Money amount={method.price_per_kg} currency={method.currency} />
                        </td>
                        <td className="number">
                          <Money amount={method.free_over} currency={method.currency} />
                        </td>
                        <td>{weightRange(method)}</td>
                        <td>{method.estimated_days === null ? <span className="muted">—</span> : `${method.estimated_days} ${method.estimated_days === 1 ? 'day' : 'days'}`}</td>
                        <td>
                          <ActiveBadge active={method.is_active} />
                        </td>
                        <td>
                          <div className="actions">
                            <DialogButton label="Edit" title={`Edit “${method.name}”`}>
                              {(close) => <ShippingMethodForm existing={method} close={close} onSaved={setNotice} />}
                            </DialogButton>
                            <DeleteButton removal={removal} row={{ id: method.id, label: method.name }} question={`Delete the shipping method “${method.name}”?`} />
                          </div>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <PagePager label="Shipping methods" meta={meta} onChange={setPage} />
            </>
          )
        }
      </QueryState>
    </Section>
  )
}

/** A shipping method's weight bounds are kilograms, whatever the products' units. */
const KILOGRAMS = { message: 'Enter kilograms such as 2.5, with at most 4 decimals' }

function weightRange({ min_weight: min, max_weight: max }: ShippingMethod) {
  if (min === null && max === null) return <span className="muted">Any</span>
  if (max === null) return `From ${min} kg`
  if (min === null) return `Up to ${max} kg`
  return `${min}–${max} kg`
}

function ShippingMethodForm({ existing, close, onSaved }: FormProps<ShippingMethod>) {
  const [errors, setErrors] = useState<Errors>({})
  const save = useSave(
    'shipping',
    (body: Schemas['CreateShippingMethodRequest']) => (existing ? client.updateShippingMethod(existing.id, body) : client.createShippingMethod(body)),
    () => {
      close()
      onSaved(existing ? 'Shipping method saved.' : 'Shipping method created.')
    },
  )
  const amount = (value: number | null | undefined) => (existing && value !== null && value !== undefined ? moneyInputValue(value, existing.currency) : '')

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault()
    const values = formText(event.currentTarget)
    const found: Errors = {}
    const currency = readCurrency(values.currency, 'currency', found, { required: true })
    const money = (field: string) => (currency ? readMoney(values[field], currency, field, found) : null)
    const body = {
      name: values.name?.trim() ?? '',
      currency: currency ?? '',
      countries: readCountries(values.countries, 'countries', found),
      base_price: money('base_price') ?? 0,
      // Empty: nothing per kilogram; no free shipping.
      price_per_kg: money('price_per_kg') ?? 0,
      free_over: money('free_over'),
      min_weight: readWeight(values.min_weight, 'min_weight', found, KILOGRAMS),
      max_weight: readWeight(values.max_weight, 'max_weight', found, KILOGRAMS),
      estimated_days: readWhole(values.estimated_days, 'estimated_days', found, { min: 0 }),
      is_active: values.is_active === 'on',
    }
    if (body.min_weight !== null && body.max_weight !== null && body.max_weight < body.min_weight) found.max_weight = 'At least the minimum weight'
    setErrors(found)
    if (Object.keys(found).length === 0) save.mutate(body)
  }

  return (
    <form className="form" onSubmit={submit}>
      <ErrorNotice error={save.error} />
      <div className="form-row">
        <TextField label="Name" name="name" required maxLength={200} defaultValue={existing?.name} autoComplete="off" />
        <TextField label="Currency" name="currency" required maxLength={3} defaultValue={existing?.currency} error={errors.currency} hint="Such as EUR" autoComplete="off" />
      </div>
      <TextField
        label="Countries"
        name="countries"
        defaultValue={existing?.countries.join(', ')}
        error={errors.countries}
        hint="Two-letter codes separated by commas, such as DE, AT; empty: everywhere."
        autoComplete="off"
      />
      <div className="form-row">
        <TextField label="Base price" name="base_price" required inputMode="decimal" defaultValue={amount(existing?.base_price)} error={errors.base_price} autoComplete="off" />
        <TextField label="Price per kg" name="price_per_kg" inputMode="decimal" defaultValue={amount(existing?.price_per_kg)} error={errors.price_per_kg} hint="Empty: none." autoComplete="off" />
        <TextField label="Free over" name="free_over" inputMode="decimal" defaultValue={amount(existing?.free_over)} error={errors.free_over} hint="Subtotal from which it is free; empty: never." autoComplete="off" />
      </div>
      <div className="form-row">
        <TextField label="Minimum weight (kg)" name="min_weight" inputMode="decimal" defaultValue={existing?.min_weight ?? ''} error={errors.min_weight} autoComplete="off" />
        <TextField label="Maximum weight (kg)" name="max_weight" inputMode="decimal" defaultValue={existing?.max_weight ?? ''} error={errors.max_weight} autoComplete="off" />
        <TextField label="Estimated days" name="estimated_days" inputMode="numeric" defaultValue={existing?.estimated_days ?? ''} error={errors.estimated_days} autoComplete="off" />
      </div>
      <CheckboxField label="Active" name="is_active" defaultChecked={existing?.is_active ?? true} />
      <FormButtons pending={save.isPending} existing={existing} close={close} />
    </form>
  )
}

function TaxRates() {
  const [page, setPage] = useState(1)
  const [notice, setNotice] = useState('')
  const rates = useQuery({
    queryKey: ['tax-rates', page],
    queryFn: () => client.listTaxRates({ page }),
    placeholderData: keepPreviousData,
  })
  const removal = useRemove('tax-rates', (id) => client.deleteTaxRate(id), setNotice)

  return (
    <Section
      title="Tax rates"
      actions={
        <DialogButton label="New tax rate" title="New tax rate" className="button button-primary">
          {(close) => <TaxRateForm close={close} onSaved={setNotice} />}
        </DialogButton>
      }
    >
      <SuccessNotice>{notice}</SuccessNotice>
      <ErrorNotice error={removal.error} title="Could not delete the tax rate" />
      <QueryState query={rates} what="tax rates">
        {({ tax_rates: rows, meta }) =>
          rows.length === 0 ? (
            <p className="empty">No tax rates yet: orders are taxed nothing.</p>
          ) : (
            <>
              <div className="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">Country</th>
                      <th scope="col">Region</th>
                      <th scope="col" className="number">
                        Rate
                      </th>
                      <th scope="col">Rounding</th>
                      <th scope="col">Actions</th>
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((rate) => (
                      <tr key={rate.id}>
                        <td>{rate.name}</td>
                        <td>{rate.country}</td>
                        <td>{rate.region ?? <span className="muted">Whole country</span>}</td>
                        <td className="number">{formatPercent(rate.rate)}</td>
                        <td>{ROUNDING_LABELS[rate.rounding]}</td>
                        <td>
                          <div className="actions">
                            <DialogButton label="Edit" title={`Edit “${rate.name}”`}>
                              {(close) => <TaxRateForm existing={rate} close={close} onSaved={setNotice} />}
                            </DialogButton>
                            <DeleteButton removal={removal} row={{ id: rate.id, label: rate.name }} question={`Delete the tax rate “${rate.name}”?`} />
                          </div>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <PagePager label="Tax rates" meta={meta} onChange={setPage} />
            </>
          )
        }
      </QueryState>
    </Section>
  )
}

const ROUNDING_LABELS: Record<TaxRate['rounding'], string> = { line: 'Each line', order: 'Once per order' }

function TaxRateForm({ existing, close, onSaved }: FormProps<TaxRate>) {
  const [errors, setErrors] = useState<Errors>({})
  const save = useSave(
    'tax-rates',
    (body: Schemas['CreateTaxRateRequest']) => (existing ? client.updateTaxRate(existing.id, body) : client.createTaxRate(body)),
    () => {
      close()
      onSaved(existing ? 'Tax rate saved.' : 'Tax rate created.')
    },
  )

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault()
    const values = formText(event.currentTarget)
    const found: Errors = {}
    const country = readCountry(values.country, 'country', found)
    const rate = readPercent(values.rate, 'rate', found, { allowZero: true, message: 'Enter a percent from 0 to 100, with at most 4 decimals' })
    setErrors(found)
    if (!country || rate === null || Object.keys(found).length > 0) return
    save.mutate({
      name: values.name?.trim() ?? '',
      country,
      // Empty: the rate is the whole country's.
      region: orNull(values.region),
      rate,
      rounding: values.rounding === 'order' ? 'order' : 'line',
    })
  }

  return (
    <form className="form" onSubmit={submit}>
      <ErrorNotice error={save.error} />
      <TextField label="Name" name="name" required maxLength={200} defaultValue={existing?.name} hint="Such as VAT" autoComplete="off" />
      <div className="form-row">
        <TextField label="Country" name="country" required maxLength={2} defaultValue={existing?.country} error={errors.country} hint="Two-letter code, such as DE" autoComplete="off" />
        <TextField label="Region" name="region" maxLength={100} defaultValue={existing?.region ?? ''} hint="Empty: the whole country." autoComplete="off" />
        <TextField label="Rate (%)" name="rate" required inputMode="decimal" defaultValue={existing?.rate} error={errors.rate} hint="0 to 100, such as 19 or 8.875" autoComplete="off" />
      </div>
      <SelectField
        label="Rounding"
        name="rounding"
        defaultValue={existing?.rounding ?? 'line'}
        options={[
          ['line', 'Each line, then added up (default)'],
          ['order', 'Once per order, shared out over the lines'],
        ]}
      />
      <FormButtons pending={save.isPending} existing={existing} close={close} />
    </form>
  )
}

function StockLocations() {
  const [page, setPage] = useState(1)
  const [notice, setNotice] = useState('')
  const locations = useQuery({
    queryKey: ['stock-locations', page],
    queryFn: () => client.listStockLocations({ page }),
    placeholderData: keepPreviousData,
  })

  return (
    <Section
      title="Stock locations"
      actions={
        <DialogButton label="New stock location" title="New stock location" className="button button-primary">
          {(close) => <StockLocationForm close={close} onSaved={setNotice} />}
        </DialogButton>
      }
    >
      <SuccessNotice>{notice}</SuccessNotice>
      <QueryState query={locations} what="stock locations">
        {({ stock_locations: rows, meta }) =>
          rows.length === 0 ? (
            <p className="empty">No stock locations yet.</p>
          ) : (
            <>
              <div className="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col" className="number">
                        Priority
                      </th>
                      <th scope="col">Default</th>
                      <th scope="col">Active</th>
                      <th scope="col">Actions</th>
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((location) => (
                      <tr key={location.id}>
                        <td>{location.name}</td>
                        <td className="number">{location.priority}</td>
                        <td>{location.is_default ? <Badge value="default" label="Default" /> : <span className="muted">—</span>}</td>
                        <td>
                          <ActiveBadge active={location.is_active} />
                        </td>
                        <td>
                          <DialogButton label="Edit" title={`Edit “${location.name}”`}>
                            {(close) => <StockLocationForm existing={location} close={close} onSaved={setNotice} />}
                          </DialogButton>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <PagePager label="Stock locations" meta={meta} onChange={setPage} />
            </>
          )
        }
      </QueryState>
    </Section>
  )
}

function StockLocationForm({ existing, close, onSaved }: FormProps<StockLocation>) {
  const [errors, setErrors] = useState<Errors>({})
  const save = useSave(
    'stock-locations',
    (body: Schemas['CreateStockLocationRequest']) => (existing ? client.updateStockLocation(existing.id, body) : client.createStockLocation(body)),
    () => {
      close()
      onSaved(existing ? 'Stock location saved.' : 'Stock location created.')
    },
  )

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault()
    const values = formText(event.currentTarget)
    const found: Errors = {}
    const priority = readWhole(values.priority, 'priority', found, { min: 0, max: 1_000_000 })
    setErrors(found)
    if (Object.keys(found).length > 0) return
    save.mutate({
      name: values.name?.trim() ?? '',
      // Empty: the API's default on create, unchanged on edit.
      priority: priority ?? undefined,
      is_active: values.is_active === 'on',
      // The default cannot be set to false, only moved to another location: sent only when ticked.
      is_default: values.is_default === 'on' ? true : undefined,
    })
  }

  return (
    <form className="form" onSubmit={submit}>
      <ErrorNotice error={save.error} />
      <div className="form-row">
        <TextField label="Name" name="name" required maxLength={200} defaultValue={existing?.name} autoComplete="off" />
        <TextField
          label="Priority"
          name="priority"
          inputMode="numeric"
          defaultValue={existing?.priority}
          error={errors.priority}
          hint="Orders take stock from the lowest first."
          autoComplete="off"
        />
      </div>
      <CheckboxField label="Active" name="is_active" defaultChecked={existing?.is_active ?? true} hint="An inactive location sells nothing; what it has committed can still ship." />
      {existing?.is_default ? (
        <p className="muted small">This is the default location: make another location the default to change that.</p>
      ) : (
        <CheckboxField label="Default location" name="is_default" hint="New products start here; the previous default stops being it." />
      )}
      <FormButtons pending={save.isPending} existing={existing} close={close} />
    </form>
  )
}

function FormButtons({ pending, existing, close }: { pending: boolean; existing: unknown; close(): void }) {
  return (
    <div className="actions">
      <SubmitButton pending={pending}>{existing ? 'Save' : 'Create'}</SubmitButton>
      <button type="button" className="button" onClick={close}>
        Cancel
      </button>
    </div>
  )
}

/** A dialog form's save: the section's list refreshes, then the dialog closes and says so. */
function useSave<Body>(queryKey: string, save: (body: Body) => Promise<unknown>, done: () => void) {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: save,
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: [queryKey] })
      done()
    },
  })
}

interface Row {
  id: string
  label: string
}
type Removal = ReturnType<typeof useRemove>

function useRemove(queryKey: string, remove: (id: string) => Promise<unknown>, onDone: (message: string) => void) {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: (row: Row) => remove(row.id),
    onMutate: () => onDone(''),
    onSuccess: (_, row) => {
      void queryClient.invalidateQueries({ queryKey: [queryKey] })
      onDone(`“${row.label}” deleted.`)
    },
  })
}

function DeleteButton({ removal, row, question }: { removal: Removal; row: Row; question: string }) {
  return (
    <button
      type="button"
      className="button button-danger"
      disabled={removal.isPending && removal.variables.id === row.id}
      onClick={() => window.confirm(question) && removal.mutate(row)}
    >
      Delete
    </button>
  )
}
