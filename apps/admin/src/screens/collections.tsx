/**
 * Collections (docs/catalog.md, "Collections"): manual ones hold the products staff place in them,
 * in order; automatic ones hold what their rules match, kept current by the API as products change.
 * The rules editor shows what the rules match now (POST /collections/preview) before anything is saved.
 */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useEffect, useState, type FormEvent } from 'react'
import { Link, useNavigate, useParams } from 'react-router'
import { client, type Schemas } from '../api'
import { Badge, DateTime, PagePager } from '../components/data'
import { ErrorNotice, Loading, QueryState, SuccessNotice } from '../components/feedback'
import { CheckboxField, formText, orNull, orUndefined, SelectField, SubmitButton, TextAreaField, TextField } from '../components/forms'
import { Page, Section } from '../components/page'
import { readCurrency, type Errors } from '../form-values'
import { parseMoney } from '../money'
import { useAttributeDefinitions } from './attributes'
import { listAll } from './products'

type Collection = Schemas['Collection']
type Rule = Schemas['CollectionRule']
type RuleField = Rule['field']
type Operator = Rule['operator']
type Kind = Collection['kind']
type Match = Collection['match']
type Sort = Collection['sort']
type CollectionFields = Schemas['CreateCollectionRequest']

const KIND_LABELS: Record<Kind, string> = { manual: 'Manual', automatic: 'Automatic' }

const SORTS: readonly (readonly [Sort, string])[] = [
  ['manual', 'In the order placed'],
  ['best_selling', 'Best selling'],
  ['newest', 'Newest'],
  ['title', 'Title, A to Z'],
  ['price_asc', 'Price, low to high'],
  ['price_desc', 'Price, high to low'],
]
const SORT_LABELS = Object.fromEntries(SORTS) as Record<Sort, string>

/** What each field of a rule compares, with which operators, and what else it needs (as the API checks them). */
const RULE_FIELDS: Record<RuleField, { label: string; operators: Operator[]; name?: string; value?: boolean; currency?: boolean }> = {
  tag: { label: 'Tag', operators: ['equals', 'not_equals'], value: true },
  type: { label: 'Product type', operators: ['equals', 'not_equals'], value: true },
  vendor: { label: 'Vendor', operators: ['equals', 'not_equals'], value: true },
  title: { label: 'Title', operators: ['contains', 'equals', 'not_equals'], value: true },
  price: { label: 'Price', operators: ['greater_than', 'less_than'], value: true, currency: true },
  attribute: { label: 'Attribute', operators: ['equals', 'not_equals', 'greater_than', 'less_than'], name: 'Attribute', value: true },
  option: { label: 'Option', operators: ['equals', 'not_equals'], name: 'Option name', value: true },
  stock: { label: 'Stock', operators: ['in_stock', 'out_of_stock'] },
  on_sale: { label: 'On sale', operators: ['is_true', 'is_false'] },
}
const OPERATOR_LABELS: Record<Operator, string> = {
  equals: 'is',
  not_equals: 'is not',
  contains: 'contains',
  greater_than: 'is greater than',
  less_than: 'is less than',
  in_stock: 'in stock',
  out_of_stock: 'out of stock',
  is_true: 'yes',
  is_false: 'no',
}

/** After a collection is written: its lists, itself, and the products' lists (which name collections). */
function useCollectionRefresh() {
  const queryClient = useQueryClient()
  return () => Promise.all([queryClient.invalidateQueries({ queryKey: ['collections'] }), queryClient.invalidateQueries({ queryKey: ['products'] })])
}

// ——— The list ———

export function Collections() {
  const refresh = useCollectionRefresh()
  const [page, setPage] = useState(1)
  const [notice, setNotice] = useState('')
  const collections = useQuery({
    queryKey: ['collections', 'list', page],
    queryFn: ({ signal }) => client.listCollections({ page, per_page: 50 }, { signal }),
    placeholderData: keepPreviousData,
  })
  const publish = useMutation({
    mutationFn: (collection: Collection) => client.updateCollection(collection.id, { published: !collection.published }),
    onMutate: () => setNotice(''),
    onSuccess: async (saved) => {
      await refresh()
      setNotice(`“${saved.title}” ${saved.published ? 'published' : 'unpublished'}.`)
    },
  })

  return (
    <Page
      title="Collections"
      actions={
        <Link className="button button-primary" to="/collections/new">
          New collection
        </Link>
      }
    >
      <SuccessNotice>{notice}</SuccessNotice>
      <ErrorNotice error={publish.error} title="Could not change the collection" />
      <QueryState query={collections} what="collections">
        {({ collections: rows, meta }) =>
          rows.length === 0 ? (
            <p className="empty">No collections yet.</p>
          ) : (
            <>
              <div className="table-wrap" aria-busy={collections.isPlaceholderData || undefined}>
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Title</th>
                      <th scope="col">Kind</th>
                      <th scope="col" className="number">
                        Products
                      </th>
                      <th scope="col">Sorted by</th>
                      <th scope="col">Status</th>
                      <th scope="col">Updated</th>
                      <th scope="col">Actions</th>
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((collection) => (
                      <tr key={collection.id}>
                        <td>
                          <Link to={`/collections/${collection.id}`}>{collection.title}</Link>
                        </td>
                        <td>{collection.kind === 'automatic' ? `Automatic (${collection.rules.length} ${collection.rules.length === 1 ? 'rule' : 'rules'})` : 'Manual'}</td>
                        <td className="number">{collection.product_count}</td>
                        <td>{SORT_LABELS[collection.sort]}</td>
                        <td>
                          <PublishedBadge published={collection.published} />
                        </td>
                        <td>
                          <DateTime value={collection.updated_at} />
                        </td>
                        <td>
                          <button
                            type="button"
                            className="button"
                            aria-label={`${collection.published ? 'Unpublish' : 'Publish'} “${collection.title}”`}
                            disabled={publish.isPending && publish.variables.id === collection.id}
                            onClick={() => publish.mutate(collection)}
                          >
                            {collection.published ? 'Unpublish' : 'Publish'}
                          </button>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <PagePager label="Collections" meta={meta} onChange={setPage} />
            </>
          )
        }
      </QueryState>
    </Page>
  )
}

const PublishedBadge = ({ published }: { published: boolean }) => (published ? <Badge value="active" label="Published" /> : <Badge value="draft" label="Unpublished" />)

// ——— One collection ———

export function CollectionEdit() {
  const { id } = useParams()
  // Keyed by id: another collection's screen starts with a fresh form.
  return id ? <ExistingCollection key={id} id={id} /> : <NewCollection />
}

const backToList = <Link to="/collections">← Collections</Link>

function NewCollection() {
  const navigate = useNavigate()
  const refresh = useCollectionRefresh()
  const create = useMutation({
    mutationFn: (fields: CollectionFields) => client.createCollection(fields),
    onSuccess: (collection) => {
      void refresh()
      navigate(`/collections/${collection.id}`)
    },
  })
  return (
    <Page title="New collection" back={backToList}>
      <ErrorNotice error={create.error} title="Could not create the collection" />
      <CollectionForm submitLabel="Create collection" pending={create.isPending} onSubmit={(fields) => create.mutate(fields)} />
    </Page>
  )
}

function ExistingCollection({ id }: { id: string }) {
  const navigate = useNavigate()
  const queryClient = useQueryClient()
  const refresh = useCollectionRefresh()
  const collection = useQuery({ queryKey: ['collections', id], queryFn: ({ signal }) => client.getCollection(id, undefined, { signal }) })
  const data = collection.data
  // A manual collection's products, in its order: the picker starts from them.
  const placed = useQuery({
    queryKey: ['collections', id, 'products', data?.slug],
    queryFn: ({ signal }) => listAll(client.paginate('listProducts', { collection: data!.slug, include_inactive: true, per_page: 100 }, { signal }).items()),
    enabled: data?.kind === 'manual',
  })
  const update = useMutation({
    mutationFn: ({ kind: _kind, ...fields }: CollectionFields) => client.updateCollection(id, fields),
    onSuccess: refresh,
  })
  const remove = useMutation({
    mutationFn: () => client.deleteCollection(id),
    onSuccess: () => {
      navigate('/collections')
      // The lists only: this collection, still shown until the screen changes, is not asked for again (it is gone).
      void queryClient.invalidateQueries({ queryKey: ['collections', 'list'] })
      void queryClient.invalidateQueries({ queryKey: ['products'] })
    },
  })

  return (
    <Page
      title={data?.title ?? 'Collection'}
      back={backToList}
      actions={
        data ? (
          <>
            <PublishedBadge published={data.published} />
            <button
              type="button"
              className="button button-danger"
              disabled={remove.isPending}
              onClick={() => window.confirm(`Delete the collection “${data.title}”? Its products stay.`) && remove.mutate()}
            >
              Delete
            </button>
          </>
        ) : null
      }
    >
      <ErrorNotice error={remove.error} title="Could not delete the collection" />
      <ErrorNotice error={update.error} title="Could not save the collection" />
      {update.isSuccess ? <SuccessNotice>Saved: {update.data.product_count === 1 ? '1 product' : `${update.data.product_count} products`} in it now.</SuccessNotice> : null}
      <QueryState query={collection} what="the collection">
        {(collection) =>
          collection.kind === 'manual' && !placed.data ? (
            <QueryState query={placed} what="its products">
              {() => null}
            </QueryState>
          ) : (
            <CollectionForm
              // Saved (or changed elsewhere): the form starts again from what the API holds.
              key={`${collection.updated_at} ${placed.dataUpdatedAt}`}
              collection={collection}
              products={placed.data}
              submitLabel="Save collection"
              pending={update.isPending}
              onSubmit={(fields) => update.mutate(fields)}
            />
          )
        }
      </QueryState>
    </Page>
  )
}

interface Placed {
  id: string
  title: string
}

/**
 * A collection's fields, and what it holds: products picked and ordered (manual), or rules with a
 * preview of what they match (automatic). Its kind is chosen when it is made and stays.
 */
function CollectionForm({
  collection,
  products,
  submitLabel,
  pending,
  onSubmit,
}: {
  collection?: Collection
  products?: readonly Placed[]
  submitLabel: string
  pending: boolean
  onSubmit(fields: CollectionFields): void
}) {
  const [kind, setKind] = useState<Kind>(collection?.kind ?? 'automatic')
  const [match, setMatch] = useState<Match>(collection?.match ?? 'all')
  const [rules, setRules] = useState<RuleDraft[]>(() => (collection?.rules ?? []).map(draftOf))
  const [placed, setPlaced] = useState<Placed[]>(() => (products ?? []).map(({ id, title }) => ({ id, title })))
  const [sort, setSort] = useState<Sort>(collection?.sort ?? 'best_selling')
  const [errors, setErrors] = useState<Errors>({})

  function chooseKind(next: Kind) {
    setKind(next)
    // Each kind's own default order, as the API gives it.
    setSort(next === 'manual' ? 'manual' : 'best_selling')
  }

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault()
    const values = formText(event.currentTarget)
    const found: Errors = {}
    if (!values.title?.trim()) found.title = 'Enter a title'
    const read = kind === 'automatic' ? readRules(rules, found) : []
    setErrors(found)
    if (Object.keys(found).length > 0) return
    onSubmit({
      kind,
      title: values.title!.trim(),
      slug: orUndefined(values.slug),
      description: orNull(values.description),
      published: values.published === 'on',
      sort,
      ...(kind === 'automatic' ? { match, rules: read } : { product_ids: placed.map((product) => product.id) }),
    })
  }

  return (
    <form onSubmit={submit} noValidate>
      <Section title="Details">
        <div className="form-fields">
          <TextField label="Title" name="title" required maxLength={500} defaultValue={collection?.title} error={errors.title} />
          <TextField
            label="Slug"
            name="slug"
            maxLength={200}
            defaultValue={collection?.slug}
            hint="Its address in the shop: lowercase letters, digits and hyphens. Empty: made from the title."
          />
          <TextAreaField label="Description" name="description" maxLength={20000} defaultValue={collection?.description ?? ''} />
          <div className="form-row">
            {collection ? null : (
              <SelectField
                label="Kind"
                value={kind}
                onChange={(event) => chooseKind(event.target.value as Kind)}
                options={[
                  ['automatic', 'Automatic: rules pick the products'],
                  ['manual', 'Manual: you pick the products'],
                ]}
                hint="It stays as chosen."
              />
            )}
            <SelectField
              label="Default sort"
              value={sort}
              onChange={(event) => setSort(event.target.value as Sort)}
              // The order placed is a manual collection's only.
              options={kind === 'manual' ? SORTS : SORTS.filter(([each]) => each !== 'manual')}
              hint="The order of its products when a shop asks for none."
            />
          </div>
          <CheckboxField label="Published" name="published" defaultChecked={collection?.published ?? false} hint="Shown in the shop. Unpublished: staff only." />
        </div>
      </Section>
      {kind === 'automatic' ? (
        <Section title="Rules">
          <RulesEditor match={match} onMatchChange={setMatch} rules={rules} onChange={setRules} errors={errors} />
        </Section>
      ) : (
        <Section title="Products">
          <ProductPicker placed={placed} onChange={setPlaced} />
        </Section>
      )}
      <div className="actions">
        <SubmitButton pending={pending}>{submitLabel}</SubmitButton>
        {collection ? <span className="muted small">{KIND_LABELS[collection.kind]} collection</span> : null}
      </div>
    </form>
  )
}

// ——— Rules ———

interface RuleDraft {
  key: string
  field: RuleField
  operator: Operator
  name: string
  value: string
  currency: string
}

let lastKey = 0
const newKey = () => `rule-${++lastKey}`

const draftOf = (rule: Rule): RuleDraft => ({
  key: newKey(),
  field: rule.field,
  operator: rule.operator,
  name: rule.name ?? '',
  value: rule.value ?? '',
  currency: rule.currency ?? '',
})

/**
 * The rules as the API takes them, only the parts each field uses; what is missing or refused is
 * named in `errors` under `rules[i].<part>` (the API's own names for them).
 */
function readRules(rules: readonly RuleDraft[], errors: Errors): Rule[] {
  return rules.map((rule, i) => {
    const shape = RULE_FIELDS[rule.field]
    const field = (part: string) => `rules[${i}].${part}`
    const name = rule.name.trim()
    const value = rule.value.trim()
    if (shape.name && !name) errors[field('name')] = rule.field === 'attribute' ? 'Choose an attribute' : 'Enter the option’s name'
    if (shape.value && !value) errors[field('value')] = 'Enter a value'
    let currency: string | null = null
    if (shape.currency) {
      currency = readCurrency(rule.currency, field('currency'), errors, { required: true })
      if (currency && value) {
        const amount = parseMoney(value, currency)
        if (!amount.ok) errors[field('value')] = amount.message
      }
    }
    if (rule.field === 'attribute' && (rule.operator === 'greater_than' || rule.operator === 'less_than') && value && !/^-?\d+([.,]\d+)?$|^\d{4}-\d{2}-\d{2}$/.test(value)) {
      errors[field('value')] = 'Enter a number, or a date such as 2026-05-01'
    }
    return {
      field: rule.field,
      operator: rule.operator,
      ...(shape.name ? { name } : {}),
      ...(shape.value ? { value: rule.field === 'price' || rule.field === 'attribute' ? value.replace(',', '.') : value } : {}),
      ...(shape.currency ? { currency } : {}),
    }
  })
}

function RulesEditor({
  match,
  onMatchChange,
  rules,
  onChange,
  errors,
}: {
  match: Match
  onMatchChange(match: Match): void
  rules: readonly RuleDraft[]
  onChange(rules: RuleDraft[]): void
  errors: Errors
}) {
  const definitions = useAttributeDefinitions()
  const change = (index: number, update: Partial<RuleDraft>) => onChange(rules.map((rule, i) => (i === index ? { ...rule, ...update } : rule)))
  const [added, setAdded] = useState<string>()

  function addRule() {
    const rule: RuleDraft = { key: newKey(), field: 'tag', operator: 'equals', name: '', value: '', currency: '' }
    onChange([...rules, rule])
    setAdded(rule.key)
  }

  function chooseField(index: number, field: RuleField) {
    const shape = RULE_FIELDS[field]
    const current = rules[index]!
    change(index, {
      field,
      operator: shape.operators.includes(current.operator) ? current.operator : shape.operators[0]!,
      name: '',
      value: shape.value && RULE_FIELDS[current.field].value && field !== 'attribute' && current.field !== 'attribute' ? current.value : '',
      currency: shape.currency ? current.currency || 'USD' : '',
    })
  }

  return (
    <div className="form-fields">
      <SelectField
        label="Products must match"
        value={match}
        onChange={(event) => onMatchChange(event.target.value as Match)}
        options={[
          ['all', 'All of the rules'],
          ['any', 'Any of the rules'],
        ]}
      />
      {rules.length === 0 ? <p className="empty">No rules: the collection holds nothing until it has one.</p> : null}
      {rules.map((rule, index) => {
        const shape = RULE_FIELDS[rule.field]
        const field = (part: string) => `rules[${index}].${part}`
        const definition = rule.field === 'attribute' ? definitions.data?.find((each) => each.key === rule.name) : undefined
        const choices = definition?.type === 'boolean' ? ['true', 'false'] : (definition?.choices ?? [])
        return (
          <fieldset key={rule.key} className="form-group">
            <legend>Rule {index + 1}</legend>
            <div className="rule">
              <SelectField
                label="Field"
                value={rule.field}
                autoFocus={added === rule.key}
                onChange={(event) => chooseField(index, event.target.value as RuleField)}
                options={Object.entries(RULE_FIELDS).map(([value, { label }]) => [value, label] as const)}
              />
              {rule.field === 'attribute' ? (
                <SelectField
                  label="Attribute"
                  value={rule.name}
                  onChange={(event) => change(index, { name: event.target.value, value: '' })}
                  options={[['', definitions.isPending ? 'Loading…' : 'Choose…'], ...(definitions.data ?? []).map((each) => [each.key, each.name] as const)]}
                  error={errors[field('name')]}
                />
              ) : shape.name ? (
                <TextField
                  label={shape.name}
                  value={rule.name}
                  maxLength={100}
                  autoComplete="off"
                  onChange={(event) => change(index, { name: event.target.value })}
                  error={errors[field('name')]}
                />
              ) : null}
              <SelectField
                label="Condition"
                value={rule.operator}
                onChange={(event) => change(index, { operator: event.target.value as Operator })}
                options={shape.operators.map((operator) => [operator, OPERATOR_LABELS[operator]] as const)}
              />
              {!shape.value ? null : choices.length > 0 && (rule.operator === 'equals' || rule.operator === 'not_equals') ? (
                <SelectField
                  label="Value"
                  value={rule.value}
                  onChange={(event) => change(index, { value: event.target.value })}
                  options={[['', 'Choose…'], ...choices.map((choice) => [choice, definition?.type === 'boolean' ? (choice === 'true' ? 'Yes' : 'No') : choice] as const)]}
                  error={errors[field('value')]}
                />
              ) : (
                <TextField
                  label={rule.field === 'price' ? 'Amount' : 'Value'}
                  value={rule.value}
                  maxLength={300}
                  autoComplete="off"
                  inputMode={rule.field === 'price' ? 'decimal' : undefined}
                  onChange={(event) => change(index, { value: event.target.value })}
                  error={errors[field('value')]}
                />
              )}
              {shape.currency ? (
                <TextField
                  label="Currency"
                  value={rule.currency}
                  maxLength={3}
                  autoComplete="off"
                  autoCapitalize="characters"
                  onChange={(event) => change(index, { currency: event.target.value })}
                  error={errors[field('currency')]}
                />
              ) : null}
              <div className="actions">
                <button
                  type="button"
                  className="button button-danger"
                  aria-label={`Remove rule ${index + 1}`}
                  onClick={() => onChange(rules.filter((_, i) => i !== index))}
                >
                  ✕
                </button>
              </div>
            </div>
          </fieldset>
        )
      })}
      <div className="actions">
        <button type="button" className="button" disabled={rules.length >= 50} onClick={addRule}>
          Add rule
        </button>
      </div>
      <RulesPreview match={match} rules={rules} />
    </div>
  )
}

/** A value that follows `value` once it has stayed the same for `ms` (a preview asked once typing pauses). */
function useSettled<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value)
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms)
    return () => clearTimeout(timer)
  }, [value, ms])
  return settled
}

/** What the rules match now, asked again as they change (nothing is saved). */
function RulesPreview({ match, rules }: { match: Match; rules: readonly RuleDraft[] }) {
  const found: Errors = {}
  const read = readRules(rules, found)
  const complete = rules.length > 0 && Object.keys(found).length === 0
  const asked = useSettled(JSON.stringify({ match, rules: complete ? read : null }), 300)
  const body = JSON.parse(asked) as { match: Match; rules: Rule[] | null }
  const preview = useQuery({
    queryKey: ['collections', 'preview', asked],
    queryFn: ({ signal }) => client.previewCollection({ match: body.match, rules: body.rules! }, { signal }),
    enabled: body.rules !== null,
    placeholderData: keepPreviousData,
  })

  return (
    <section className="preview" aria-label="Preview">
      <h3>Preview</h3>
      {!complete ? (
        <p className="muted">Complete the rules to see the products they match.</p>
      ) : preview.error ? (
        <ErrorNotice error={preview.error} title="Could not preview the rules" />
      ) : !preview.data ? (
        <Loading what="the matching products" />
      ) : (
        <div aria-busy={preview.isFetching || undefined}>
          <p role="status">
            {preview.data.count === 0 ? 'No product matches these rules now.' : preview.data.count === 1 ? '1 product matches now.' : `${preview.data.count} products match now.`}
          </p>
          {preview.data.products.length > 0 ? (
            <ul>
              {preview.data.products.map((product) => (
                <li key={product.id}>
                  <Link to={`/products/${product.id}`}>{product.title}</Link>
                </li>
              ))}
              {preview.data.count > preview.data.products.length ? <li className="muted">and {preview.data.count - preview.data.products.length} more</li> : null}
            </ul>
          ) : null}
        </div>
      )}
    </section>
  )
}

// ——— Products of a manual collection ———

/** Products found by their words and placed in order: added from a search, moved, removed. */
function ProductPicker({ placed, onChange }: { placed: readonly Placed[]; onChange(placed: Placed[]): void }) {
  const [search, setSearch] = useState('')
  const settled = useSettled(search.trim(), 300)
  const found = useQuery({
    queryKey: ['products', 'picker', settled],
    queryFn: ({ signal }) => client.listProducts({ search: settled, include_inactive: true, per_page: 10 }, { signal }),
    enabled: settled !== '',
    placeholderData: keepPreviousData,
  })
  const isPlaced = (id: string) => placed.some((product) => product.id === id)
  const move = (index: number, by: number) => {
    const next = [...placed]
    const [product] = next.splice(index, 1)
    next.splice(index + by, 0, product!)
    onChange(next)
  }

  return (
    <div className="form-fields">
      {placed.length === 0 ? (
        <p className="empty">No products yet: find them below.</p>
      ) : (
        <ol className="ordered" aria-label="Products in the collection">
          {placed.map((product, index) => (
            <li key={product.id}>
              <span>
                {index + 1}. <Link to={`/products/${product.id}`}>{product.title}</Link>
              </span>
              <span className="actions">
                <button type="button" className="button" aria-label={`Move “${product.title}” up`} disabled={index === 0} onClick={() => move(index, -1)}>
                  ↑
                </button>
                <button
                  type="button"
                  className="button"
                  aria-label={`Move “${product.title}” down`}
                  disabled={index === placed.length - 1}
                  onClick={() => move(index, 1)}
                >
                  ↓
                </button>
                <button
                  type="button"
                  className="button button-danger"
                  aria-label={`Remove “${product.title}”`}
                  onClick={() => onChange(placed.filter((each) => each.id !== product.id))}
                >
                  ✕
                </button>
              </span>
            </li>
          ))}
        </ol>
      )}
      <TextField
        label="Find products"
        type="search"
        value={search}
        autoComplete="off"
        onChange={(event) => setSearch(event.target.value)}
        // Enter searches here: it does not submit the collection.
        onKeyDown={(event) => event.key === 'Enter' && event.preventDefault()}
        hint="Words of their titles or descriptions"
      />
      {settled === '' ? null : (
        <QueryState query={found} what="products">
          {({ products }) =>
            products.length === 0 ? (
              <p className="empty">No products match.</p>
            ) : (
              <ul className="ordered" aria-label="Products found" aria-busy={found.isPlaceholderData || undefined}>
                {products.map((product) => (
                  <li key={product.id}>
                    <span>{product.title}</span>
                    <button
                      type="button"
                      className="button"
                      aria-label={`${isPlaced(product.id) ? 'Added' : 'Add'} “${product.title}”`}
                      disabled={isPlaced(product.id)}
                      onClick={() => onChange([...placed, { id: product.id, title: product.title }])}
                    >
                      {isPlaced(product.id) ? 'Added' : 'Add'}
                    </button>
                  </li>
                ))}
              </ul>
            )
          }
        </QueryState>
      )}
    </div>
  )
}
