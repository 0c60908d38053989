/**
 * A product's options (docs/catalog.md, "Options"): an editor of the ordered names and values, saved
 * as the whole list with their ids (so a rename or a move carries the variants with it), and the
 * generation of a variant for every combination of values none has yet.
 */
import { useMutation } from '@tanstack/react-query'
import { useState, type FormEvent } from 'react'
import { client, CommerceError, type Schemas } from '../api'
import { ErrorNotice, SuccessNotice } from '../components/feedback'
import { CheckboxField, formText, SelectField, SubmitButton, TextField } from '../components/forms'
import { Section } from '../components/page'
import { readMoney, readWhole, type Errors, LARGEST_INTEGER } from '../form-values'
import { useCatalogRefresh } from './products'

type Product = Schemas['Product']
type OptionInput = Schemas['ProductOptionInput']

/** The API's limits: options per product, values per option. */
const MOST_OPTIONS = 10
const MOST_VALUES = 100

interface ValueDraft {
  key: string
  id?: string
  value: string
  swatchColor: string | null
  swatchImageUrl: string | null
}

interface OptionDraft {
  key: string
  id?: string
  name: string
  values: ValueDraft[]
  /** A new option on a product with variants: the value they all take. */
  defaultValue: string
}

/** Keys of rows added in this editor (saved rows are keyed by their ids). */
let lastKey = 0
const newKey = () => `new-${++lastKey}`

const draftsOf = (options: Product['options']): OptionDraft[] =>
  options.map((option) => ({
    key: option.id,
    id: option.id,
    name: option.name,
    defaultValue: '',
    values: option.values.map((value) => ({ key: value.id, id: value.id, value: value.value, swatchColor: value.swatch_color, swatchImageUrl: value.swatch_image_url })),
  }))

/** Moves the item at `index` by `by` places (within the list). */
function moved<T>(items: readonly T[], index: number, by: number): T[] {
  const target = index + by
  if (target < 0 || target >= items.length) return [...items]
  const next = [...items]
  ;[next[index], next[target]] = [next[target]!, next[index]!]
  return next
}

/**
 * Names the variants an answer names by id (a value still chosen, two variants made alike) by their
 * titles, which is how staff know them.
 */
function namingVariants(error: unknown, product: Product): unknown {
  if (!(error instanceof CommerceError)) return error
  let message = error.message
  for (const variant of product.variants) message = message.replaceAll(variant.id, `“${variant.title}”`)
  if (message === error.message) return error
  return new CommerceError({ status: error.status, code: error.code, message, details: error.details, requestId: error.requestId })
}

/** The API's details about one option (`options[i]…`): shown beside it, as well as at the top. */
const detailsAbout = (error: unknown, index: number): string[] =>
  error instanceof CommerceError ? error.details.filter((detail) => detail.field?.startsWith(`options[${index}]`)).map((detail) => detail.message) : []

export function OptionsSection({ product }: { product: Product }) {
  const refresh = useCatalogRefresh()
  const save = useMutation({
    mutationFn: (options: OptionInput[]) => client.updateProduct(product.id, { options }),
    onSuccess: refresh,
  })
  return (
    <Section title="Options">
      <p className="muted small">
        What a buyer picks (Size, Colour), in the order shown. Renaming or moving an option or a value carries its variants with it; a value still chosen by a variant
        cannot be removed.
      </p>
      <ErrorNotice error={namingVariants(save.error, product)} title="Could not save the options" />
      {save.isSuccess ? <SuccessNotice>Options saved</SuccessNotice> : null}
      {/* Keyed by the saved options: once saved (or changed elsewhere), the editor starts from them. */}
      <OptionsEditor
        key={JSON.stringify(product.options)}
        product={product}
        apiError={save.error}
        pending={save.isPending}
        onSave={(options) => save.mutate(options)}
      />
    </Section>
  )
}

function OptionsEditor({ product, apiError, pending, onSave }: { product: Product; apiError: unknown; pending: boolean; onSave(options: OptionInput[]): void }) {
  const [options, setOptions] = useState<OptionDraft[]>(() => draftsOf(product.options))
  const [errors, setErrors] = useState<Errors>({})
  // The row just added takes the focus, so that typing goes on there.
  const [added, setAdded] = useState<string>()
  const hasVariants = product.variants.length > 0

  const change = (index: number, update: (option: OptionDraft) => OptionDraft) => setOptions((all) => all.map((option, i) => (i === index ? update(option) : option)))
  const changeValue = (index: number, valueIndex: number, update: (value: ValueDraft) => ValueDraft) =>
    change(index, (option) => ({ ...option, values: option.values.map((value, j) => (j === valueIndex ? update(value) : value)) }))

  function addOption() {
    const option = { key: newKey(), name: '', defaultValue: '', values: [{ key: newKey(), value: '', swatchColor: null, swatchImageUrl: null }] }
    setOptions((all) => [...all, option])
    setAdded(option.key)
  }

  function addValue(index: number) {
    const value = { key: newKey(), value: '', swatchColor: null, swatchImageUrl: null }
    change(index, (option) => ({ ...option, values: [...option.values, value] }))
    setAdded(value.key)
  }

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault()
    const found = checkOptions(options, hasVariants)
    setErrors(found)
    if (Object.keys(found).length > 0) return
    onSave(
      options.map((option) => ({
        ...(option.id ? { id: option.id } : {}),
        name: option.name.trim(),
        values: option.values.map((value) => ({
          ...(value.id ? { id: value.id } : {}),
          value: value.value.trim(),
          swatch_color: value.swatchColor,
          swatch_image_url: value.swatchImageUrl,
        })),
        ...(!option.id && hasVariants ? { default_value: option.defaultValue } : {}),
      })),
    )
  }

  return (
    <form className="form options-editor" onSubmit={submit} noValidate>
      {options.length === 0 ? <p className="empty">No options: variants are described freely, or the product is sold as it is.</p> : null}
      {options.map((option, index) => {
        const field = `options[${index}]`
        const about = detailsAbout(apiError, index)
        return (
          <fieldset key={option.key} className="form-group option">
            <legend>Option {index + 1}</legend>
            <div className="option-head">
              <TextField
                label="Name"
                value={option.name}
                maxLength={100}
                autoComplete="off"
                autoFocus={added === option.key}
                onChange={(event) => change(index, (current) => ({ ...current, name: event.target.value }))}
                hint={option.id ? undefined : 'New: such as Size or Colour'}
                error={errors[`${field}.name`]}
              />
              <div className="actions">
                <button type="button" className="button" aria-label="Move option up" disabled={index === 0} onClick={() => setOptions((all) => moved(all, index, -1))}>
                  ↑
                </button>
                <button
                  type="button"
                  className="button"
                  aria-label="Move option down"
                  disabled={index === options.length - 1}
                  onClick={() => setOptions((all) => moved(all, index, 1))}
                >
                  ↓
                </button>
                <button type="button" className="button button-danger" onClick={() => setOptions((all) => all.filter((_, i) => i !== index))}>
                  Remove option
                </button>
              </div>
            </div>
            <div className="option-values">
              {option.values.map((value, valueIndex) => {
                const valueField = `${field}.values[${valueIndex}]`
                return (
                  <div key={value.key} className="option-value">
                    <TextField
                      label={`Value ${valueIndex + 1}`}
                      value={value.value}
                      maxLength={200}
                      autoComplete="off"
                      autoFocus={added === value.key}
                      onChange={(event) => changeValue(index, valueIndex, (current) => ({ ...current, value: event.target.value }))}
                      error={errors[`${valueField}.value`]}
                    />
                    <CheckboxField
                      label="Swatch"
                      aria-label={`Swatch for value ${valueIndex + 1}`}
                      checked={value.swatchColor !== null}
                      onChange={(event) => changeValue(index, valueIndex, (current) => ({ ...current, swatchColor: event.target.checked ? '#808080' : null }))}
                    />
                    {value.swatchColor !== null ? (
                      <TextField
                        label="Colour"
                        aria-label={`Swatch colour of value ${valueIndex + 1}`}
                        type="color"
                        className="swatch-input"
                        value={value.swatchColor}
                        onChange={(event) => changeValue(index, valueIndex, (current) => ({ ...current, swatchColor: event.target.value }))}
                      />
                    ) : null}
                    <div className="actions">
                      <button
                        type="button"
                        className="button"
                        aria-label={`Move value ${valueIndex + 1} up`}
                        disabled={valueIndex === 0}
                        onClick={() => change(index, (current) => ({ ...current, values: moved(current.values, valueIndex, -1) }))}
                      >
                        ↑
                      </button>
                      <button
                        type="button"
                        className="button"
                        aria-label={`Move value ${valueIndex + 1} down`}
                        disabled={valueIndex === option.values.length - 1}
                        onClick={() => change(index, (current) => ({ ...current, values: moved(current.values, valueIndex, 1) }))}
                      >
                        ↓
                      </button>
                      <button
                        type="button"
                        className="button button-danger"
                        aria-label={`Remove value ${valueIndex + 1}`}
                        onClick={() => change(index, (current) => ({ ...current, values: current.values.filter((_, j) => j !== valueIndex) }))}
                      >
                        ✕
                      </button>
                    </div>
                  </div>
                )
              })}
            </div>
            {errors[`${field}.values`] ? <p className="field-error">{errors[`${field}.values`]}</p> : null}
            <div className="actions">
              <button type="button" className="button" disabled={option.values.length >= MOST_VALUES} onClick={() => addValue(index)}>
                Add value
              </button>
            </div>
            {!option.id && hasVariants ? (
              <SelectField
                label="Value of the existing variants"
                value={option.defaultValue}
                onChange={(event) => change(index, (current) => ({ ...current, defaultValue: event.target.value }))}
                options={[['', 'Choose…'], ...option.values.filter((value) => value.value.trim()).map((value) => [value.value.trim(), value.value.trim()] as const)]}
                hint="The variants the product has take this value of the new option."
                error={errors[`${field}.default_value`]}
              />
            ) : null}
            {about.length > 0 ? (
              <ul className="field-error">
                {about.map((message) => (
                  <li key={message}>{message}</li>
                ))}
              </ul>
            ) : null}
          </fieldset>
        )
      })}
      <div className="actions">
        <button type="button" className="button" disabled={options.length >= MOST_OPTIONS} onClick={addOption}>
          Add option
        </button>
        <SubmitButton pending={pending}>Save options</SubmitButton>
      </div>
    </form>
  )
}

/** What the API would refuse, said before sending: names and values present, each once (case aside). */
function checkOptions(options: readonly OptionDraft[], hasVariants: boolean): Errors {
  const errors: Errors = {}
  const same = (a: string, b: string) => a.trim().toLowerCase() === b.trim().toLowerCase()
  options.forEach((option, index) => {
    const field = `options[${index}]`
    if (!option.name.trim()) errors[`${field}.name`] = 'Name the option'
    // Filters write `option=<name>:<value>`.
    else if (option.name.includes(':')) errors[`${field}.name`] = 'An option’s name cannot hold a colon'
    else if (options.findIndex((other) => same(other.name, option.name)) !== index) errors[`${field}.name`] = 'Another option has this name'
    if (option.values.length === 0) errors[`${field}.values`] = 'Add at least one value'
    option.values.forEach((value, valueIndex) => {
      const valueField = `${field}.values[${valueIndex}].value`
      if (!value.value.trim()) errors[valueField] = 'Enter the value, or remove it'
      else if (option.values.findIndex((other) => same(other.value, value.value)) !== valueIndex) errors[valueField] = 'This value is given twice'
    })
    if (!option.id && hasVariants && !option.values.some((value) => value.value.trim() && value.value.trim() === option.defaultValue)) {
      errors[`${field}.default_value`] = 'Choose the value the existing variants take'
    }
  })
  return errors
}

/** Every combination of the saved options' values (the first option varying slowest), as the API makes them. */
function combinations(options: Product['options']): Record<string, string>[] {
  return options.reduce<Record<string, string>[]>((made, option) => made.flatMap((choice) => option.values.map((value) => ({ ...choice, [option.name]: value.value }))), [{}])
}

/** Variants for the combinations no variant has yet: one price, compare-at price and stock for all. */
export function GenerateVariantsForm({ product, onDone }: { product: Product; onDone(message: string): void }) {
  const refresh = useCatalogRefresh()
  const [errors, setErrors] = useState<Errors>({})
  const generate = useMutation({
    mutationFn: (body: Schemas['GenerateVariantsRequest']) => client.generateProductVariants(product.id, body),
    onSuccess: async ({ variants }) => {
      await refresh()
      onDone(variants.length === 0 ? 'Every combination has a variant already.' : `${variants.length} ${variants.length === 1 ? 'variant' : 'variants'} made.`)
    },
  })
  const key = (choice: Record<string, string>) =>
    JSON.stringify(
      Object.entries(choice)
        .map(([name, value]) => [name.toLowerCase(), value.toLowerCase()])
        .sort(),
    )
  const existing = new Set(product.variants.map((variant) => key(variant.options)))
  const all = combinations(product.options)
  const missing = all.filter((choice) => !existing.has(key(choice)))

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault()
    const values = formText(event.currentTarget)
    const found: Errors = {}
    const price = readMoney(values.price, product.currency, 'price', found)
    const compareAtPrice = readMoney(values.compare_at_price, product.currency, 'compare_at_price', found)
    const stock = readWhole(values.inventory_quantity, 'inventory_quantity', found, { min: 0, max: LARGEST_INTEGER })
    setErrors(found)
    if (Object.keys(found).length > 0) return
    generate.mutate({ price, compare_at_price: compareAtPrice, ...(stock === null ? {} : { inventory_quantity: stock }) })
  }

  return (
    <form className="form" onSubmit={submit} noValidate>
      <ErrorNotice error={generate.error} title="Could not generate the variants" />
      <p>
        {missing.length === 0
          ? `All ${all.length} combinations of the saved options have a variant.`
          : `${missing.length} of the ${all.length} combinations of the saved options have no variant yet: ${missing
              .slice(0, 6)
              .map((choice) => Object.values(choice).join(' / '))
              .join(', ')}${missing.length > 6 ? ', …' : ''}.`}
      </p>
      <div className="form-row">
        <TextField
          label="Price"
          name="price"
          inputMode="decimal"
          autoComplete="off"
          hint={`In ${product.currency}. Empty: the product’s price.`}
          error={errors.price}
        />
        <TextField label="Compare-at price" name="compare_at_price" inputMode="decimal" autoComplete="off" hint="Empty: the product’s." error={errors.compare_at_price} />
      </div>
      <TextField
        label="Initial stock of each"
        name="inventory_quantity"
        inputMode="numeric"
        autoComplete="off"
        hint="Units at the default location. Empty: none."
        error={errors.inventory_quantity}
      />
      <div className="actions">
        <SubmitButton pending={generate.isPending}>Generate variants</SubmitButton>
      </div>
    </form>
  )
}
