/**
 * Promotions and coupons. A coupon is a promotion with a code and a coupon type: both lists show the
 * same rows (docs/promotions.md), so a change through either refreshes both.
 */
import { keepPreviousData, useMutation, useQuery, useQueryClient, type QueryClient } from '@tanstack/react-query'
import { useState, type FormEvent } from 'react'
import { client, type Schemas } from '../api'
import { ActiveBadge, DateTime, formatPercent, Money, PagePager } from '../components/data'
import { DialogButton } from '../components/dialog'
import { ErrorNotice, QueryState, SuccessNotice } from '../components/feedback'
import { CheckboxField, formText, orUndefined, SelectField, SubmitButton, TextField } from '../components/forms'
import { Page, Section } from '../components/page'
import { readCurrency, readDateTime, readMoney, readPercent, readWhole, type Errors } from '../form-values'

type Promotion = Schemas['Promotion']
type Coupon = Schemas['Coupon']
type DiscountType = Promotion['type']
type CouponType = Coupon['type']

const TYPE_LABELS: Record<DiscountType, string> = {
  percentage: 'Percentage',
  fixed_amount: 'Fixed amount',
  free_shipping: 'Free shipping',
  buy_x_get_y: 'Buy X get Y',
}
const PROMOTION_TYPES: readonly DiscountType[] = ['percentage', 'fixed_amount', 'free_shipping', 'buy_x_get_y']
const COUPON_TYPES: readonly CouponType[] = ['percentage', 'fixed_amount', 'free_shipping']

const refreshDiscounts = (queryClient: QueryClient) => {
  void queryClient.invalidateQueries({ queryKey: ['promotions'] })
  void queryClient.invalidateQueries({ queryKey: ['coupons'] })
}

export function Promotions() {
  return (
    <Page title="Promotions">
      <PromotionsSection />
      <CouponsSection />
    </Page>
  )
}

function PromotionsSection() {
  const [page, setPage] = useState(1)
  const [notice, setNotice] = useState('')
  const promotions = useQuery({
    queryKey: ['promotions', page],
    queryFn: () => client.listPromotions({ page }),
    placeholderData: keepPreviousData,
  })
  const actions = useRowActions(
    (id, is_active) => client.updatePromotion(id, { is_active }),
    (id) => client.deletePromotion(id),
    setNotice,
  )

  return (
    <Section
      title="Promotions"
      actions={
        <DialogButton label="New promotion" title="New promotion" className="button button-primary">
          {(close) => <NewPromotionForm close={close} onSaved={setNotice} />}
        </DialogButton>
      }
    >
      <SuccessNotice>{notice}</SuccessNotice>
      <ErrorNotice error={actions.toggle.error} title="Could not change the promotion" />
      <ErrorNotice error={actions.remove.error} title="Could not delete the promotion" />
      <QueryState query={promotions} what="promotions">
        {({ promotions: rows, meta }) =>
          rows.length === 0 ? (
            <p className="empty">No promotions yet.</p>
          ) : (
            <>
              <div className="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">Code</th>
                      <th scope="col">Type</th>
                      <th scope="col">Value</th>
                      <th scope="col">Used / limit</th>
                      <th scope="col">Active</th>
                      <th scope="col">Starts</th>
                      <th scope="col">Ends</th>
                      <th scope="col">Actions</th>
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((promotion) => (
                      <tr key={promotion.id}>
                        <td>{promotion.name}</td>
                        <td>{promotion.code ? <span className="code">{promotion.code}</span> : <span className="muted">Automatic</span>}</td>
                        <td>{TYPE_LABELS[promotion.type]}</td>
                        <td>
                          <DiscountValue discount={promotion} buyXGetY={promotion.buy_x_get_y} />
                        </td>
                        <td>
                          <Usage used={promotion.times_used} limit={promotion.usage_limit} />
                        </td>
                        <td>
                          <ActiveBadge active={promotion.is_active} />
                        </td>
                        <td>
                          <DateTime value={promotion.starts_at} />
                        </td>
                        <td>
                          <DateTime value={promotion.ends_at} />
                        </td>
                        <td>
                          <RowButtons actions={actions} row={{ id: promotion.id, label: promotion.name, active: promotion.is_active }} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <PagePager label="Promotions" meta={meta} onChange={setPage} />
            </>
          )
        }
      </QueryState>
    </Section>
  )
}

function CouponsSection() {
  const [page, setPage] = useState(1)
  const [notice, setNotice] = useState('')
  const coupons = useQuery({
    queryKey: ['coupons', page],
    queryFn: () => client.listCoupons({ page }),
    placeholderData: keepPreviousData,
  })
  const actions = useRowActions(
    (id, is_active) => client.updateCoupon(id, { is_active }),
    (id) => client.deleteCoupon(id),
    setNotice,
  )

  return (
    <Section
      title="Coupons"
      actions={
        <DialogButton label="New coupon" title="New coupon" className="button button-primary">
          {(close) => <NewCouponForm close={close} onSaved={setNotice} />}
        </DialogButton>
      }
    >
      <SuccessNotice>{notice}</SuccessNotice>
      <ErrorNotice error={actions.toggle.error} title="Could not change the coupon" />
      <ErrorNotice error={actions.remove.error} title="Could not delete the coupon" />
      <QueryState query={coupons} what="coupons">
        {({ coupons: rows, meta }) =>
          rows.length === 0 ? (
            <p className="empty">No coupons yet.</p>
          ) : (
            <>
              <div className="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Code</th>
                      <th scope="col">Type</th>
                      <th scope="col">Value</th>
                      <th scope="col">Minimum subtotal</th>
                      <th scope="col">Used / limit</th>
                      <th scope="col">Active</th>
                      <th scope="col">Starts</th>
                      <th scope="col">Ends</th>
                      <th scope="col">Actions</th>
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((coupon) => (
                      <tr key={coupon.id}>
                        <td>
                          <span className="code">{coupon.code}</span>
                        </td>
                        <td>{TYPE_LABELS[coupon.type]}</td>
                        <td>
                          <DiscountValue discount={coupon} />
                        </td>
                        <td>{coupon.currency ? <Money amount={coupon.min_subtotal} currency={coupon.currency} /> : <span className="muted">—</span>}</td>
                        <td>
                          <Usage used={coupon.times_used} limit={coupon.usage_limit} />
                        </td>
                        <td>
                          <ActiveBadge active={coupon.is_active} />
                        </td>
                        <td>
                          <DateTime value={coupon.starts_at} />
                        </td>
                        <td>
                          <DateTime value={coupon.ends_at} />
                        </td>
                        <td>
                          <RowButtons actions={actions} row={{ id: coupon.id, label: coupon.code, active: coupon.is_active }} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <PagePager label="Coupons" meta={meta} onChange={setPage} />
            </>
          )
        }
      </QueryState>
    </Section>
  )
}

/** What a discount takes off, read by its type: the value is a percent, an amount, or nothing. */
function DiscountValue({
  discount,
  buyXGetY,
}: {
  discount: { type: DiscountType; value: number | null; currency: string | null }
  buyXGetY?: Promotion['buy_x_get_y']
}) {
  const { type, value, currency } = discount
  if (type === 'free_shipping') return <>Free shipping</>
  if (value === null) return <span className="muted">—</span>
  if (type === 'fixed_amount') return currency ? <Money amount={value} currency={currency} /> : <>{value}</>
  if (type === 'buy_x_get_y' && buyXGetY) {
    const given = value === 100 ? 'free' : `at ${formatPercent(value)} off`
    return (
      <>
        Buy {buyXGetY.buy_quantity}, get {buyXGetY.get_quantity} {given}
      </>
    )
  }
  return <>{formatPercent(value)}</>
}

function Usage({ used, limit }: { used: number; limit: number | null }) {
  return <>{limit === null ? `${used} (no limit)` : `${used} / ${limit}`}</>
}

interface Row {
  id: string
  label: string
  active: boolean
}
type RowActions = ReturnType<typeof useRowActions>

/** Activating, deactivating and deleting a row of either list, with a message saying what was done. */
function useRowActions(
  setActive: (id: string, isActive: boolean) => Promise<unknown>,
  remove: (id: string) => Promise<unknown>,
  onDone: (message: string) => void,
) {
  const queryClient = useQueryClient()
  const toggle = useMutation({
    mutationFn: (row: Row) => setActive(row.id, !row.active),
    onMutate: () => onDone(''),
    onSuccess: (_, row) => {
      refreshDiscounts(queryClient)
      onDone(`“${row.label}” ${row.active ? 'deactivated' : 'activated'}.`)
    },
  })
  const removal = useMutation({
    mutationFn: (row: Row) => remove(row.id),
    onMutate: () => onDone(''),
    onSuccess: (_, row) => {
      refreshDiscounts(queryClient)
      onDone(`“${row.label}” deleted.`)
    },
  })
  return { toggle, remove: removal }
}

function RowButtons({ actions: { toggle, remove }, row }: { actions: RowActions; row: Row }) {
  const busy = (toggle.isPending && toggle.variables.id === row.id) || (remove.isPending && remove.variables.id === row.id)
  return (
    <div className="actions">
      <button type="button" className="button" disabled={busy} onClick={() => toggle.mutate(row)}>
        {row.active ? 'Deactivate' : 'Activate'}
      </button>
      <button
        type="button"
        className="button button-danger"
        disabled={busy}
        onClick={() => window.confirm(`Delete “${row.label}”? Carts holding it lose it; orders keep what it took off.`) && remove.mutate(row)}
      >
        Delete
      </button>
    </div>
  )
}

function NewPromotionForm({ close, onSaved }: { close(): void; onSaved(message: string): void }) {
  const queryClient = useQueryClient()
  const [type, setType] = useState<DiscountType>('percentage')
  const [errors, setErrors] = useState<Errors>({})
  const create = useMutation({
    mutationFn: (body: Schemas['CreatePromotionRequest']) => client.createPromotion(body),
    onSuccess: (promotion) => {
      refreshDiscounts(queryClient)
      close()
      onSaved(`Promotion “${promotion.name}” created.`)
    },
  })

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault()
    const values = formText(event.currentTarget)
    const found: Errors = {}
    const code = readCode(values.code, found)
    const name = orUndefined(values.name)
    if (!name && !code) found.name = 'Name a promotion that has no code'
    const terms = readTerms(values, type, found)
    const buyQuantity = type === 'buy_x_get_y' ? readWhole(values.buy_quantity, 'buy_quantity', found, { ...COUNT, required: true }) : null
    const getQuantity = type === 'buy_x_get_y' ? readWhole(values.get_quantity, 'get_quantity', found, { ...COUNT, required: true }) : null
    setErrors(found)
    if (Object.keys(found).length > 0) return
    // The other types refuse buy_x_get_y: it is sent only with its own type.
    const buyXGetY = buyQuantity && getQuantity ? { buy_quantity: buyQuantity, get_quantity: getQuantity } : undefined
    create.mutate({ name, code, type, ...terms, buy_x_get_y: buyXGetY })
  }

  return (
    <form className="form" onSubmit={submit}>
      <ErrorNotice error={create.error} />
      <div className="form-row">
        <TextField label="Name" name="name" maxLength={200} error={errors.name} hint="Orders record it; defaults to the code." autoComplete="off" />
        <TextField label="Code" name="code" maxLength={64} error={errors.code} hint="Letters, digits, - and _; empty: applies automatically." autoComplete="off" />
      </div>
      <DiscountFields types={PROMOTION_TYPES} type={type} onTypeChange={setType} errors={errors} />
      <div className="actions">
        <SubmitButton pending={create.isPending}>Create</SubmitButton>
        <button type="button" className="button" onClick={close}>
          Cancel
        </button>
      </div>
    </form>
  )
}

function NewCouponForm({ close, onSaved }: { close(): void; onSaved(message: string): void }) {
  const queryClient = useQueryClient()
  const [type, setType] = useState<CouponType>('percentage')
  const [errors, setErrors] = useState<Errors>({})
  const create = useMutation({
    mutationFn: (body: Schemas['CreateCouponRequest']) => client.createCoupon(body),
    onSuccess: (coupon) => {
      refreshDiscounts(queryClient)
      close()
      onSaved(`Coupon “${coupon.code}” created.`)
    },
  })

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault()
    const values = formText(event.currentTarget)
    const found: Errors = {}
    const code = readCode(values.code, found)
    if (!code) found.code ??= 'Enter the code customers type'
    const terms = readTerms(values, type, found)
    setErrors(found)
    if (!code || Object.keys(found).length > 0) return
    create.mutate({ code, type, ...terms })
  }

  return (
    <form className="form" onSubmit={submit}>
      <ErrorNotice error={create.error} />
      <TextField label="Code" name="code" maxLength={64} error={errors.code} hint="Letters, digits, - and _; stored upper-case." autoComplete="off" />
      <DiscountFields
        types={COUPON_TYPES}
        type={type}
        onTypeChange={(next) => setType(next as CouponType)}
        errors={errors}
      />
      <div className="actions">
        <SubmitButton pending={create.isPending}>Create</SubmitButton>
        <button type="button" className="button" onClick={close}>
          Cancel
        </button>
      </div>
    </form>
  )
}

/** The fields promotions and coupons share; the type decides what the value means. */
function DiscountFields({
  types,
  type,
  onTypeChange,
  errors,
}: {
  types: readonly DiscountType[]
  type: DiscountType
  onTypeChange(type: DiscountType): void
  errors: Errors
}) {
  return (
    <>
      <div className="form-row">
        <SelectField
          label="Type"
          name="type"
          value={type}
          onChange={(event) => onTypeChange(event.target.value as DiscountType)}
          options={types.map((option) => [option, TYPE_LABELS[option]] as const)}
        />
        {type === 'free_shipping' ? null : (
          <TextField
            label={type === 'fixed_amount' ? 'Value (amount off)' : 'Value (percent off)'}
            name="value"
            inputMode="decimal"
            autoComplete="off"
            error={errors.value}
            hint={type === 'fixed_amount' ? 'In the currency below.' : type === 'buy_x_get_y' ? 'Off the units given, 100 = free.' : 'Above 0, at most 100.'}
          />
        )}
      </div>
      {type === 'buy_x_get_y' ? (
        <div className="form-row">
          <TextField label="Units to buy" name="buy_quantity" inputMode="numeric" autoComplete="off" error={errors.buy_quantity} />
          <TextField label="Units given" name="get_quantity" inputMode="numeric" autoComplete="off" error={errors.get_quantity} />
        </div>
      ) : null}
      <div className="form-row">
        <TextField
          label="Currency"
          name="currency"
          maxLength={3}
          autoComplete="off"
          error={errors.currency}
          hint="Such as EUR. Needed for a fixed amount or a minimum subtotal; empty: carts in any currency."
        />
        <TextField label="Minimum subtotal" name="min_subtotal" inputMode="decimal" autoComplete="off" error={errors.min_subtotal} hint="Before discounts; empty: none." />
      </div>
      <div className="form-row">
        <TextField label="Starts" name="starts_at" type="datetime-local" error={errors.starts_at} hint="Your local time; empty: at once." />
        <TextField label="Ends" name="ends_at" type="datetime-local" error={errors.ends_at} hint="Your local time; empty: never." />
      </div>
      <TextField
        label="Usage limit"
        name="usage_limit"
        inputMode="numeric"
        autoComplete="off"
        error={errors.usage_limit}
        hint="Orders it may be used on in all; empty: no limit."
      />
      <CheckboxField label="Active" name="is_active" defaultChecked />
    </>
  )
}

/** A code as the API takes it, or undefined when empty (a promotion without one applies automatically). */
function readCode(text: string | undefined, errors: Errors): string | undefined {
  const code = orUndefined(text)
  if (code && !/^[A-Za-z0-9_-]+$/.test(code)) errors.code = 'Use letters, digits, - and _ only'
  return code
}

/** Units to buy or give, and usage limits: whole numbers of at least 1. */
const COUNT = { min: 1, message: 'Enter a whole number of at least 1' }

/** The terms both APIs share, each field at fault named in `errors`. */
function readTerms(values: Record<string, string>, type: DiscountType, errors: Errors) {
  // Empty: carts in any currency, unless an amount needs one. A wrong code keeps the reader's message.
  const currency = readCurrency(values.currency, 'currency', errors)
  const minSubtotalText = orUndefined(values.min_subtotal)
  if (!currency && type === 'fixed_amount') errors.currency ??= 'A fixed amount needs its currency'
  else if (!currency && minSubtotalText) errors.currency ??= 'A minimum subtotal needs its currency'

  // Amounts are read in the currency's decimals, so only with a valid currency.
  const value = readValue(values.value, type, currency, errors)
  const startsAt = readDateTime(values.starts_at, 'starts_at', errors)
  const endsAt = readDateTime(values.ends_at, 'ends_at', errors)
  if (startsAt && endsAt && endsAt <= startsAt) errors.ends_at = 'End after the start'

  return {
    value,
    currency,
    min_subtotal: currency ? readMoney(values.min_subtotal, currency, 'min_subtotal', errors) : null,
    starts_at: startsAt,
    ends_at: endsAt,
    usage_limit: readWhole(values.usage_limit, 'usage_limit', errors, COUNT),
    is_active: values.is_active === 'on',
  }
}

/** What the discount takes off: a percent, an amount in the currency, or nothing (free shipping). */
function readValue(text: string | undefined, type: DiscountType, currency: string | null, errors: Errors): number | null {
  if (type === 'free_shipping') return null
  const value = orUndefined(text)
  if (!value) {
    errors.value = 'Enter the value'
    return null
  }
  if (type !== 'fixed_amount') return readPercent(value, 'value', errors)
  // Without a valid currency there is nothing to read the amount in: the currency's message says so.
  if (!currency) return null
  const amount = readMoney(value, currency, 'value', errors)
  if (amount === 0) errors.value = 'Enter an amount above 0'
  return amount
}
