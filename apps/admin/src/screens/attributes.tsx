/**
 * Attribute definitions: what a key of a product's or a variant's `attributes` holds (its type,
 * the values allowed, whether listings filter on it and whether the public sees it). The screen
 * lists, defines, changes and deletes them; the product screens' inputs are made from them here
 * (AttributeFields), each input as its definition's type asks.
 */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState, type FormEvent } from 'react'
import { client, type Schemas } from '../api'
import { Badge, PagePager } from '../components/data'
import { DialogButton } from '../components/dialog'
import { ErrorNotice, QueryState, SuccessNotice } from '../components/feedback'
import { CheckboxField, formText, orNull, SelectField, SubmitButton, TextAreaField, TextField } from '../components/forms'
import { Page } from '../components/page'
import { readDate, readNumber, readWhole, type Errors } from '../form-values'
import { listAll } from './products'

type Definition = Schemas['AttributeDefinition']
type AttributeType = Definition['type']
type Owner = Definition['owner']
type Validation = NonNullable<Schemas['CreateAttributeDefinitionRequest']['validation']>
/** A value as products and variants hold it. */
type AttributeValue = Schemas['Product']['attributes'][string]
/** Values to write: null removes one. */
type AttributeChanges = Record<string, AttributeValue | null>

const TYPE_LABELS: Record<AttributeType, string> = {
  text: 'Text',
  rich_text: 'Rich text',
  integer: 'Whole number',
  decimal: 'Decimal number',
  boolean: 'Yes or no',
  date: 'Date',
  select: 'One of a list',
  multi_select: 'Several of a list',
  product_reference: 'Product',
}
const TYPES = Object.keys(TYPE_LABELS) as AttributeType[]
const OWNER_LABELS: Record<Owner, string> = { product: 'Products', variant: 'Variants' }

const isListed = (type: AttributeType) => type === 'select' || type === 'multi_select'
const isNumber = (type: AttributeType) => type === 'integer' || type === 'decimal'
const isBounded = (type: AttributeType) => isNumber(type) || type === 'date'
const isText = (type: AttributeType) => type === 'text' || type === 'rich_text'

/** Every definition (of one owner when given), in the API's order: by owner, then position. */
export function useAttributeDefinitions(owner?: Owner) {
  return useQuery({
    queryKey: ['attributes', 'all', owner ?? 'any'],
    queryFn: ({ signal }) => listAll(client.paginate('listAttributeDefinitions', { per_page: 100, owner }, { signal }).items()),
  })
}

export function Attributes() {
  const queryClient = useQueryClient()
  const [page, setPage] = useState(1)
  const [notice, setNotice] = useState('')
  const definitions = useQuery({
    queryKey: ['attributes', 'list', page],
    queryFn: ({ signal }) => client.listAttributeDefinitions({ page, per_page: 50 }, { signal }),
    placeholderData: keepPreviousData,
  })
  const remove = useMutation({
    mutationFn: (definition: Definition) => client.deleteAttributeDefinition(definition.id),
    onMutate: () => setNotice(''),
    onSuccess: (_, definition) => {
      void queryClient.invalidateQueries({ queryKey: ['attributes'] })
      // Its values went with it.
      void queryClient.invalidateQueries({ queryKey: ['products'] })
      setNotice(`“${definition.name}” deleted.`)
    },
  })
  const saved = (message: string, close: () => void) => {
    setNotice(message)
    close()
  }

  return (
    <Page
      title="Attributes"
      actions={
        <DialogButton label="New attribute" title="New attribute" className="button button-primary">
          {(close) => <AttributeForm onDone={(message) => saved(message, close)} />}
        </DialogButton>
      }
    >
      <p className="muted">What products and variants can say beyond their own fields (material, capacity, care): each value is checked against its definition.</p>
      <SuccessNotice>{notice}</SuccessNotice>
      <ErrorNotice error={remove.error} title="Could not delete the attribute" />
      <QueryState query={definitions} what="attributes">
        {({ attributes: rows, meta }) =>
          rows.length === 0 ? (
            <p className="empty">No attributes yet.</p>
          ) : (
            <>
              <div className="table-wrap" aria-busy={definitions.isPlaceholderData || undefined}>
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">Key</th>
                      <th scope="col">Of</th>
                      <th scope="col">Type</th>
                      <th scope="col">Values allowed</th>
                      <th scope="col">Filterable</th>
                      <th scope="col">Shown to</th>
                      <th scope="col">Actions</th>
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((definition) => (
                      <tr key={definition.id}>
                        <td>{definition.name}</td>
                        <td>
                          <span className="code">{definition.key}</span>
                        </td>
                        <td>{OWNER_LABELS[definition.owner]}</td>
                        <td>{TYPE_LABELS[definition.type]}</td>
                        <td>{allowedText(definition) || <span className="muted">Any</span>}</td>
                        <td>{definition.filterable ? 'Yes' : 'No'}</td>
                        <td>{definition.public ? <Badge value="public" label="Everyone" /> : <Badge value="staff" label="Staff only" />}</td>
                        <td>
                          <div className="actions">
                            <DialogButton label="Edit" title={`Edit ${definition.name}`}>
                              {(close) => <AttributeForm definition={definition} onDone={(message) => saved(message, close)} />}
                            </DialogButton>
                            <button
                              type="button"
                              className="button button-danger"
                              disabled={remove.isPending && remove.variables.id === definition.id}
                              onClick={() => window.confirm(`Delete the attribute “${definition.name}”? Every value of it goes too.`) && remove.mutate(definition)}
                            >
                              Delete
                            </button>
                          </div>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <PagePager label="Attributes" meta={meta} onChange={setPage} />
            </>
          )
        }
      </QueryState>
    </Page>
  )
}

/** What a definition allows, in a few words: its choices, its range and unit, its pattern or length. */
function allowedText({ type, choices, unit, validation }: Definition): string {
  if (isListed(type)) return choices.join(', ')
  const parts: string[] = []
  const { min, max } = validation
  if (min !== null && max !== null) parts.push(`${min} to ${max}`)
  else if (min !== null) parts.push(`${min} or more`)
  else if (max !== null) parts.push(`${max} or less`)
  if (unit) parts.push(unit)
  if (validation.pattern) parts.push(`matching ${validation.pattern}`)
  if (validation.max_length !== null) parts.push(`at most ${validation.max_length} characters`)
  return parts.join(' ')
}

/** A key made from a name, as the API takes keys: lower case letters, digits and _, starting with a letter. */
const keyOf = (name: string) =>
  name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^[^a-z]+|_+$/g, '')
    .slice(0, 64)

/** Defines an attribute, or changes one (its key, owner and type stay: a new definition changes them). */
function AttributeForm({ definition, onDone }: { definition?: Definition; onDone(message: string): void }) {
  const queryClient = useQueryClient()
  const [type, setType] = useState<AttributeType>(definition?.type ?? 'text')
  const [key, setKey] = useState('')
  const [keyTyped, setKeyTyped] = useState(false)
  const [errors, setErrors] = useState<Errors>({})
  const save = useMutation({
    mutationFn: (body: Schemas['CreateAttributeDefinitionRequest']) => {
      if (!definition) return client.createAttributeDefinition(body)
      const { key: _key, owner: _owner, type: _type, ...changes } = body
      return client.updateAttributeDefinition(definition.id, changes)
    },
    onSuccess: (saved) => {
      void queryClient.invalidateQueries({ queryKey: ['attributes'] })
      onDone(definition ? `“${saved.name}” saved.` : `Attribute “${saved.name}” created.`)
    },
  })

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault()
    const values = formText(event.currentTarget)
    const found: Errors = {}
    const name = values.name?.trim() ?? ''
    if (!name) found.name = 'Enter a name'
    if (!definition && !/^[a-z][a-z0-9_]{0,63}$/.test(key)) found.key = 'Use lower case letters, digits and _, starting with a letter'
    const choices = isListed(type) ? readChoices(values.choices, found) : undefined
    const validation = readValidation(values, type, found)
    const position = readWhole(values.position, 'position', found, { min: 0, max: 10_000 })
    setErrors(found)
    if (Object.keys(found).length > 0) return
    save.mutate({
      key: definition?.key ?? key,
      owner: (definition?.owner ?? values.owner) as Owner,
      type,
      name,
      description: orNull(values.description),
      ...(isNumber(type) ? { unit: orNull(values.unit) } : {}),
      ...(choices ? { choices } : {}),
      validation,
      filterable: values.filterable === 'on',
      public: values.public === 'on',
      ...(position === null ? {} : { position }),
    })
  }

  return (
    <form className="form" onSubmit={submit} noValidate>
      <ErrorNotice error={save.error} title={definition ? 'Could not save the attribute' : 'Could not create the attribute'} />
      <TextField
        label="Name"
        name="name"
        required
        maxLength={200}
        autoComplete="off"
        defaultValue={definition?.name}
        onChange={(event) => definition || keyTyped || setKey(keyOf(event.target.value))}
        error={errors.name}
      />
      {definition ? (
        <p className="muted small">
          Key <span className="code">{definition.key}</span>, of {OWNER_LABELS[definition.owner].toLowerCase()}, {TYPE_LABELS[definition.type].toLowerCase()}: these stay
          as defined.
        </p>
      ) : (
        <>
          <TextField
            label="Key"
            name="key"
            required
            maxLength={64}
            autoComplete="off"
            value={key}
            onChange={(event) => (setKeyTyped(true), setKey(event.target.value))}
            hint="The name in the API and in filters (attr=key:value): lower case letters, digits and _. It cannot change later."
            error={errors.key}
          />
          <div className="form-row">
            <SelectField
              label="Of"
              name="owner"
              defaultValue="product"
              options={[
                ['product', 'Products'],
                ['variant', 'Variants'],
              ]}
            />
            <SelectField
              label="Type"
              name="type"
              value={type}
              onChange={(event) => setType(event.target.value as AttributeType)}
              options={TYPES.map((each) => [each, TYPE_LABELS[each]] as const)}
            />
          </div>
        </>
      )}
      <TextAreaField label="Description" name="description" maxLength={2000} defaultValue={definition?.description ?? ''} hint="For staff: what it is for." />
      {isListed(type) ? (
        <TextAreaField
          label="Choices"
          name="choices"
          defaultValue={definition?.choices.join('\n')}
          hint="The values allowed, one per line, in the order shown."
          error={errors.choices}
        />
      ) : null}
      {isBounded(type) ? (
        <div className="form-row">
          <TextField
            label="Minimum"
            name="min"
            type={type === 'date' ? 'date' : 'text'}
            inputMode={type === 'date' ? undefined : 'decimal'}
            autoComplete="off"
            defaultValue={definition?.validation.min ?? ''}
            error={errors['validation.min']}
          />
          <TextField
            label="Maximum"
            name="max"
            type={type === 'date' ? 'date' : 'text'}
            inputMode={type === 'date' ? undefined : 'decimal'}
            autoComplete="off"
            defaultValue={definition?.validation.max ?? ''}
            error={errors['validation.max']}
          />
          {isNumber(type) ? <TextField label="Unit" name="unit" maxLength={20} autoComplete="off" defaultValue={definition?.unit ?? ''} hint="Such as g, cm or mAh" /> : null}
        </div>
      ) : null}
      {isText(type) ? (
        <div className="form-row">
          {type === 'text' ? (
            <TextField
              label="Pattern"
              name="pattern"
              maxLength={200}
              autoComplete="off"
              defaultValue={definition?.validation.pattern ?? ''}
              hint="A regular expression the whole value must match. Empty: any text."
            />
          ) : null}
          <TextField
            label="Maximum length"
            name="max_length"
            inputMode="numeric"
            autoComplete="off"
            defaultValue={definition?.validation.max_length ?? ''}
            hint="Characters. Empty: 20,000."
            error={errors['validation.max_length']}
          />
        </div>
      ) : null}
      <TextField
        label="Position"
        name="position"
        inputMode="numeric"
        autoComplete="off"
        defaultValue={definition?.position ?? ''}
        hint="Order among the attributes of products (or of variants). Empty: last."
        error={errors.position}
      />
      {type === 'rich_text' ? null : (
        <CheckboxField label="Filterable" name="filterable" defaultChecked={definition?.filterable ?? false} hint="Shop listings filter on it (attr=key:value) and count its values." />
      )}
      <CheckboxField label="Public" name="public" defaultChecked={definition?.public ?? true} hint="Shown to everyone. Unchecked: to staff only." />
      <div className="actions">
        <SubmitButton pending={save.isPending}>{definition ? 'Save attribute' : 'Create attribute'}</SubmitButton>
      </div>
    </form>
  )
}

/** Choices one per line, each once; at least one. */
function readChoices(text: string | undefined, errors: Errors): string[] {
  const choices = (text ?? '')
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
  const twice = choices.filter((choice, index) => choices.indexOf(choice) !== index)
  if (choices.length === 0) errors.choices = 'Enter the values allowed, one per line'
  else if (twice.length > 0) errors.choices = `Given twice: ${[...new Set(twice)].join(', ')}`
  return choices
}

/** The rules of a type, the others null (the API refuses a rule that does not apply to the type). */
function readValidation(values: Record<string, string>, type: AttributeType, errors: Errors): Validation {
  const bound = (field: 'min' | 'max') =>
    type === 'date' ? readDate(values[field], `validation.${field}`, errors) : isNumber(type) ? readNumber(values[field], `validation.${field}`, errors, { integer: type === 'integer' }) : null
  const min = bound('min')
  const max = bound('max')
  if (min !== null && max !== null && min > max) errors['validation.max'] = 'Enter a maximum no lower than the minimum'
  return {
    min,
    max,
    pattern: type === 'text' ? orNull(values.pattern) : null,
    max_length: isText(type) ? readWhole(values.max_length, 'validation.max_length', errors, { min: 1, max: 20_000 }) : null,
  }
}

// ——— Values, on the product and variant forms ———

const fieldName = (definition: Definition) => `attribute.${definition.key}`
const errorKey = (definition: Definition) => `attributes.${definition.key}`

/** What a definition asks of a value, as a hint under its input. */
function hintOf(definition: Definition): string | undefined {
  const rule = isListed(definition.type) ? '' : allowedText({ ...definition, unit: null })
  return [definition.description, rule && `Allowed: ${rule}.`, definition.public ? '' : 'Staff only.'].filter(Boolean).join(' ') || undefined
}

/** An input per definition, as its type asks: a list, checkboxes, yes or no, a number, a date, text. */
export function AttributeFields({ definitions, values, errors }: { definitions: readonly Definition[]; values: Record<string, AttributeValue>; errors: Errors }) {
  return (
    <>
      {definitions.map((definition) => (
        <AttributeField key={definition.id} definition={definition} value={values[definition.key]} error={errors[errorKey(definition)]} />
      ))}
    </>
  )
}

function AttributeField({ definition, value, error }: { definition: Definition; value: AttributeValue | undefined; error: string | undefined }) {
  const name = fieldName(definition)
  const label = definition.unit ? `${definition.name} (${definition.unit})` : definition.name
  const hint = hintOf(definition)
  const text = value === undefined || Array.isArray(value) ? '' : String(value)
  const { min, max } = definition.validation
  switch (definition.type) {
    case 'multi_select': {
      const chosen = Array.isArray(value) ? value : []
      return (
        <fieldset className="fieldset">
          <legend>{label}</legend>
          {definition.choices.map((choice) => (
            <CheckboxField key={choice} label={choice} name={name} value={choice} defaultChecked={chosen.includes(choice)} />
          ))}
          {hint ? <p className="hint">{hint}</p> : null}
          {error ? <p className="field-error">{error}</p> : null}
        </fieldset>
      )
    }
    case 'select':
      return <SelectField label={label} name={name} defaultValue={text} options={[['', 'Not set'], ...definition.choices.map((choice) => [choice, choice] as const)]} hint={hint} error={error} />
    case 'boolean':
      return (
        <SelectField
          label={label}
          name={name}
          defaultValue={text}
          options={[
            ['', 'Not set'],
            ['true', 'Yes'],
            ['false', 'No'],
          ]}
          hint={hint}
          error={error}
        />
      )
    case 'date':
      return (
        <TextField
          label={label}
          name={name}
          type="date"
          defaultValue={text}
          min={typeof min === 'string' ? min : undefined}
          max={typeof max === 'string' ? max : undefined}
          hint={hint}
          error={error}
        />
      )
    case 'integer':
    case 'decimal':
      return <TextField label={label} name={name} inputMode={definition.type === 'integer' ? 'numeric' : 'decimal'} autoComplete="off" defaultValue={text} hint={hint} error={error} />
    case 'rich_text':
      return <TextAreaField label={label} name={name} maxLength={definition.validation.max_length ?? 20_000} defaultValue={text} hint={hint} error={error} />
    case 'product_reference':
      return <TextField label={label} name={name} autoComplete="off" defaultValue={text} hint={hint ?? 'A product’s id'} error={error} />
    case 'text':
      return <TextField label={label} name={name} autoComplete="off" maxLength={definition.validation.max_length ?? 20_000} defaultValue={text} hint={hint} error={error} />
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * The values of a form's AttributeFields by key, null where empty (removed). What is refused is
 * named in `errors` under `attributes.<key>`, as the API names it; the rest is the API's to check.
 */
export function readAttributes(form: HTMLFormElement, definitions: readonly Definition[], errors: Errors): AttributeChanges {
  const data = new FormData(form)
  const read: AttributeChanges = {}
  for (const definition of definitions) {
    const field = errorKey(definition)
    const text = String(data.get(fieldName(definition)) ?? '')
    const bound = (value: number | string | null) => (typeof value === 'number' ? value : null)
    switch (definition.type) {
      case 'multi_select': {
        const chosen = data.getAll(fieldName(definition)).map(String)
        read[definition.key] = chosen.length > 0 ? chosen : null
        break
      }
      case 'boolean':
        read[definition.key] = text === '' ? null : text === 'true'
        break
      case 'integer':
      case 'decimal':
        read[definition.key] = readNumber(text, field, errors, {
          integer: definition.type === 'integer',
          min: bound(definition.validation.min),
          max: bound(definition.validation.max),
        })
        break
      case 'date':
        read[definition.key] = readDate(text, field, errors)
        break
      case 'product_reference':
        if (text.trim() && !UUID.test(text.trim())) errors[field] = 'Enter a product’s id'
        read[definition.key] = text.trim() || null
        break
      default:
        read[definition.key] = text.trim() ? text : null
    }
  }
  return read
}

/** Only the values that differ from those held: keys not sent keep theirs. */
export function changedAttributes(current: Record<string, AttributeValue>, read: AttributeChanges): AttributeChanges {
  return Object.fromEntries(Object.entries(read).filter(([key, value]) => JSON.stringify(value) !== JSON.stringify(current[key] ?? null)))
}
