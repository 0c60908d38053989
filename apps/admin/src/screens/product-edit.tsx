/**
 * One product: a form to create it, or, for an existing one, its details (status and scheduled
 * publication, identifiers, shipping, search listing), attributes, categories, options, variants,
 * images, prices in other currencies and quantity tiers, and stock in each location.
 */
import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query'
import { useState, type FormEvent } from 'react'
import { Link, useNavigate, useParams } from 'react-router'
import { client, type Schemas } from '../api'
import { DateTime, Facts, Money, PagePager } from '../components/data'
import { DialogButton } from '../components/dialog'
import { ErrorNotice, Loading, QueryState, SuccessNotice } from '../components/feedback'
import { CheckboxField, formText, orNull, orUndefined, SelectField, SubmitButton, TextAreaField, TextField, TextListField } from '../components/forms'
import { Page, Section } from '../components/page'
import {
  dateTimeInputValue,
  LARGEST_INTEGER,
  readBarcode,
  readCountry,
  readCurrency,
  readDateTime,
  readHsCode,
  readLength,
  readMoney,
  readWeight,
  readWhole,
  type Errors,
} from '../form-values'
import { moneyInputValue } from '../money'
import { AttributeFields, changedAttributes, readAttributes, useAttributeDefinitions } from './attributes'
import { GenerateVariantsForm, OptionsSection } from './product-options'
import { listAll, ProductStatusBadge, useCatalogRefresh as useRefresh, useCategories } from './products'

type Product = Schemas['Product']
type Category = Schemas['Category']
type Variant = Schemas['Variant']
type Price = Schemas['Price']
type InventoryLevel = Schemas['InventoryLevel']
type ProductFields = Schemas['CreateProductRequest']
type ImageType = Schemas['CreateUploadRequest']['content_type']
type AdjustmentReason = Schemas['CreateInventoryAdjustmentRequest']['reason']
type ProductStatus = Product['status']

export function ProductEdit() {
  const { id } = useParams()
  // Keyed by id: another product's screen starts with fresh forms.
  return id ? <ExistingProduct key={id} id={id} /> : <NewProduct />
}

const backToList = <Link to="/products">← Products</Link>

function NewProduct() {
  const navigate = useNavigate()
  const refresh = useRefresh()
  const categories = useCategories()
  const create = useMutation({
    mutationFn: (fields: ProductFields) => client.createProduct(fields),
    onSuccess: (product) => {
      void refresh()
      navigate(`/products/${product.id}`)
    },
  })
  return (
    <Page title="New product" back={backToList}>
      <Section title="Details">
        <ErrorNotice error={create.error} title="Could not create the product" />
        <ErrorNotice error={categories.error} title="Could not load the categories" />
        <ProductForm categories={categories.data} submitLabel="Create product" pending={create.isPending} onSubmit={(fields) => create.mutate(fields)} />
      </Section>
    </Page>
  )
}

function ExistingProduct({ id }: { id: string }) {
  const product = useQuery({ queryKey: ['products', id], queryFn: ({ signal }) => client.getProduct(id, undefined, { signal }) })
  const refresh = useRefresh()
  const setActive = useMutation({
    // Deleting is soft: the product is archived, and can be made active again.
    mutationFn: (active: boolean) => (active ? client.updateProduct(id, { is_active: true }) : client.deleteProduct(id)),
    onSuccess: refresh,
  })
  const data = product.data
  return (
    <Page
      title={data?.title ?? 'Product'}
      back={backToList}
      actions={
        data ? (
          <>
            <ProductStatusBadge product={data} />
            {data.status !== 'archived' ? (
              <button
                type="button"
                className="button button-danger"
                disabled={setActive.isPending}
                onClick={() => window.confirm(`Archive “${data.title}”? It leaves the shop; its orders keep it.`) && setActive.mutate(false)}
              >
                Archive
              </button>
            ) : (
              <button type="button" className="button" disabled={setActive.isPending} onClick={() => setActive.mutate(true)}>
                Reactivate
              </button>
            )}
          </>
        ) : null
      }
    >
      <ErrorNotice error={setActive.error} title={setActive.variables ? 'Could not reactivate the product' : 'Could not archive the product'} />
      <QueryState query={product} what="the product">
        {(product) => (
          <>
            <DetailsSection product={product} />
            <AttributesSection product={product} />
            <CategoriesSection product={product} />
            <OptionsSection product={product} />
            <VariantsSection product={product} />
            <ImagesSection product={product} />
            <PricesSection product={product} />
            <StockSection product={product} />
          </>
        )}
      </QueryState>
    </Page>
  )
}

// ——— Details ———

function DetailsSection({ product }: { product: Product }) {
  const refresh = useRefresh()
  const update = useMutation({
    mutationFn: (fields: ProductFields) => {
      const changes = changedFields(product, fields)
      // The API refuses an empty PATCH: with nothing changed there is nothing to send.
      return Object.keys(changes).length > 0 ? client.updateProduct(product.id, changes) : Promise.resolve(product)
    },
    onSuccess: refresh,
  })
  return (
    <Section title="Details">
      <Facts
        facts={[
          ['Sellable stock', product.inventory_quantity],
          ['Published', <DateTime value={product.published_at} />],
          ['Created', <DateTime value={product.created_at} />],
          ['Updated', <DateTime value={product.updated_at} />],
        ]}
      />
      <ErrorNotice error={update.error} title="Could not save the product" />
      {update.isSuccess ? <SuccessNotice>Saved</SuccessNotice> : null}
      <ProductForm product={product} submitLabel="Save" pending={update.isPending} onSubmit={(fields) => update.mutate(fields)} />
    </Section>
  )
}

/**
 * Only what differs from the product: a save does not overwrite another admin's change to other
 * fields. Lists (tags) are compared by their items.
 */
function changedFields(product: Product, fields: ProductFields): Schemas['UpdateProductRequest'] {
  const same = (a: unknown, b: unknown) => (Array.isArray(a) || Array.isArray(b) ? JSON.stringify(a) === JSON.stringify(b) : a === b)
  return Object.fromEntries(Object.entries(fields).filter(([key, value]) => value !== undefined && !same(value, product[key as keyof Product])))
}

const WEIGHT_UNITS = [
  ['kg', 'kg'],
  ['g', 'g'],
  ['lb', 'lb'],
  ['oz', 'oz'],
] as const

const DIMENSION_UNITS = [
  ['cm', 'cm'],
  ['mm', 'mm'],
  ['m', 'm'],
  ['in', 'in'],
  ['ft', 'ft'],
] as const

const STATUSES: readonly (readonly [ProductStatus, string])[] = [
  ['active', 'Active'],
  ['draft', 'Draft'],
  ['archived', 'Archived'],
]

/**
 * A product's fields. Creating also sets its initial stock and categories; an existing product's
 * stock is in "Stock by location" and its categories in their own section.
 */
function ProductForm({
  product,
  categories,
  submitLabel,
  pending,
  onSubmit,
}: {
  product?: Product
  categories?: readonly Category[]
  submitLabel: string
  pending: boolean
  onSubmit(fields: ProductFields): void
}) {
  const [errors, setErrors] = useState<Errors>({})
  // The moment as the input shows it (to the minute): left as shown, it is not sent, so its seconds
  // stay. The input follows the saved moment (one the API set, making a draft active, included), so
  // a later save does not send an empty field, which would publish it again now.
  const shownPublishedAt = product?.published_at ? dateTimeInputValue(product.published_at) : ''
  const [publishAt, setPublishAt] = useState(shownPublishedAt)
  const [followed, setFollowed] = useState(shownPublishedAt)
  if (followed !== shownPublishedAt) {
    setFollowed(shownPublishedAt)
    setPublishAt(shownPublishedAt)
  }

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault()
    const form = new FormData(event.currentTarget)
    const values = formText(event.currentTarget)
    const found: Errors = {}
    if (!values.title?.trim()) found.title = 'Enter a title'
    const currency = readCurrency(values.currency, 'currency', found, { required: true, message: 'Enter a three-letter currency code such as USD' })
    const price = currency ? readMoney(values.price, currency, 'price', found, { required: true }) : null
    const compareAtPrice = currency ? readMoney(values.compare_at_price, currency, 'compare_at_price', found) : null
    const publishedAt = readDateTime(values.published_at, 'published_at', found)
    const weight = readWeight(values.weight, 'weight', found, { message: 'Enter a weight such as 0.5' })
    const lengthMessage = { message: 'Enter a length such as 12.5, at most 1,000,000' }
    const length = readLength(values.length, 'length', found, lengthMessage)
    const width = readLength(values.width, 'width', found, lengthMessage)
    const height = readLength(values.height, 'height', found, lengthMessage)
    const barcode = readBarcode(values.barcode, 'barcode', found)
    const hsCode = readHsCode(values.hs_code, 'hs_code', found)
    const country = readCountry(values.country_of_origin, 'country_of_origin', found, { required: false })
    const stock = readWhole(values.inventory_quantity, 'inventory_quantity', found, STOCK)
    setErrors(found)
    if (Object.keys(found).length > 0 || !currency || price === null) return
    onSubmit({
      title: values.title!.trim(),
      slug: orUndefined(values.slug),
      description: orNull(values.description),
      status: values.status as ProductStatus,
      published_at: values.published_at === shownPublishedAt ? undefined : publishedAt,
      sku: orNull(values.sku),
      barcode,
      price,
      compare_at_price: compareAtPrice,
      currency,
      product_type: orNull(values.product_type),
      vendor: orNull(values.vendor),
      tags: form
        .getAll('tags')
        .flatMap((tag) => String(tag).split(','))
        .map((tag) => tag.trim())
        .filter(Boolean),
      weight,
      weight_unit: values.weight_unit as ProductFields['weight_unit'],
      length,
      width,
      height,
      dimension_unit: values.dimension_unit as ProductFields['dimension_unit'],
      hs_code: hsCode,
      country_of_origin: country,
      seo_title: orNull(values.seo_title),
      seo_description: orNull(values.seo_description),
      inventory_quantity: stock ?? undefined,
      ...(product ? {} : { category_ids: form.getAll('category_ids').map(String) }),
    })
  }

  return (
    <form className="form" onSubmit={submit} noValidate>
      <TextField label="Title" name="title" required maxLength={500} defaultValue={product?.title} error={errors.title} />
      <TextField
        label="Slug"
        name="slug"
        maxLength={200}
        defaultValue={product?.slug}
        hint="The product’s address in the shop: lowercase letters, digits and hyphens. Empty: made from the title."
      />
      <TextAreaField label="Description" name="description" maxLength={20000} defaultValue={product?.description ?? ''} />
      <div className="form-row">
        <SelectField
          label="Status"
          name="status"
          defaultValue={product?.status ?? 'active'}
          options={STATUSES}
          hint="Draft: seen by staff only. Archived: no longer sold."
        />
        <TextField
          label="Publish at"
          name="published_at"
          type="datetime-local"
          value={publishAt}
          onChange={(event) => setPublishAt(event.target.value)}
          hint="Active products go public then (your local time); a later moment schedules it. Empty: at once."
          error={errors.published_at}
        />
      </div>
      <div className="form-row">
        <TextField
          label="Price"
          name="price"
          inputMode="decimal"
          autoComplete="off"
          required
          defaultValue={product ? moneyInputValue(product.price, product.currency) : ''}
          error={errors.price}
        />
        <TextField
          label="Compare-at price"
          name="compare_at_price"
          inputMode="decimal"
          autoComplete="off"
          defaultValue={product?.compare_at_price != null ? moneyInputValue(product.compare_at_price, product.currency) : ''}
          hint="What it cost before, shown crossed out. Empty: none."
          error={errors.compare_at_price}
        />
        <TextField
          label="Currency"
          name="currency"
          maxLength={3}
          autoCapitalize="characters"
          autoComplete="off"
          required
          defaultValue={product?.currency ?? 'USD'}
          hint={product ? 'A change keeps the amounts; refused when the new currency cannot hold them.' : 'ISO 4217, such as USD or EUR'}
          error={errors.currency}
        />
      </div>
      <div className="form-row">
        <TextField label="SKU" name="sku" maxLength={100} defaultValue={product?.sku ?? ''} />
        <TextField
          label="Barcode"
          name="barcode"
          inputMode="numeric"
          autoComplete="off"
          defaultValue={product?.barcode ?? ''}
          hint="GTIN (EAN, UPC): 8, 12, 13 or 14 digits"
          error={errors.barcode}
        />
        {product ? null : (
          <TextField label="Initial stock" name="inventory_quantity" inputMode="numeric" autoComplete="off" hint="Units at the default location" error={errors.inventory_quantity} />
        )}
      </div>
      <fieldset className="form-group">
        <legend>Organization</legend>
        <div className="form-row">
          <TextField label="Product type" name="product_type" maxLength={200} defaultValue={product?.product_type ?? ''} hint="Such as Teapots" />
          <TextField label="Vendor" name="vendor" maxLength={200} defaultValue={product?.vendor ?? ''} hint="Who makes or supplies it" />
        </div>
        <TextListField label="Tags" name="tags" maxLength={100} defaultValue={product?.tags} hint="Enter or a comma adds one; collections and filters use them." />
      </fieldset>
      <fieldset className="form-group">
        <legend>Shipping and customs</legend>
        <div className="form-row">
          <TextField label="Weight" name="weight" inputMode="decimal" autoComplete="off" defaultValue={product?.weight ?? ''} error={errors.weight} />
          <SelectField label="Weight unit" name="weight_unit" defaultValue={product?.weight_unit ?? 'kg'} options={WEIGHT_UNITS} />
        </div>
        <div className="form-row">
          <TextField label="Length" name="length" inputMode="decimal" autoComplete="off" defaultValue={product?.length ?? ''} error={errors.length} />
          <TextField label="Width" name="width" inputMode="decimal" autoComplete="off" defaultValue={product?.width ?? ''} error={errors.width} />
          <TextField label="Height" name="height" inputMode="decimal" autoComplete="off" defaultValue={product?.height ?? ''} error={errors.height} />
          <SelectField label="Dimension unit" name="dimension_unit" defaultValue={product?.dimension_unit ?? 'cm'} options={DIMENSION_UNITS} />
        </div>
        <div className="form-row">
          <TextField
            label="HS code"
            name="hs_code"
            autoComplete="off"
            maxLength={20}
            defaultValue={product?.hs_code ?? ''}
            hint="Harmonized System code for customs: 6 to 10 digits"
            error={errors.hs_code}
          />
          <TextField
            label="Country of origin"
            name="country_of_origin"
            maxLength={2}
            autoCapitalize="characters"
            autoComplete="off"
            defaultValue={product?.country_of_origin ?? ''}
            hint="Two letters, such as PT"
            error={errors.country_of_origin}
          />
        </div>
      </fieldset>
      <fieldset className="form-group">
        <legend>Search engine listing</legend>
        <TextField label="SEO title" name="seo_title" maxLength={255} defaultValue={product?.seo_title ?? ''} hint="The page’s title in search results. Empty: the product’s title." />
        <TextAreaField
          label="SEO description"
          name="seo_description"
          maxLength={1000}
          defaultValue={product?.seo_description ?? ''}
          hint="The snippet under it. Empty: the search engine picks one."
        />
      </fieldset>
      {product ? null : categories ? <CategoryChoices categories={categories} checked={[]} /> : <Loading what="categories" />}
      <div className="actions">
        <SubmitButton pending={pending}>{submitLabel}</SubmitButton>
      </div>
    </form>
  )
}

// ——— Attributes ———

/** The product's attributes, each input as its definition says (GET /attributes, owner product). */
function AttributesSection({ product }: { product: Product }) {
  const refresh = useRefresh()
  const definitions = useAttributeDefinitions('product')
  const [errors, setErrors] = useState<Errors>({})
  const save = useMutation({
    mutationFn: (attributes: NonNullable<Schemas['UpdateProductRequest']['attributes']>) =>
      Object.keys(attributes).length > 0 ? client.updateProduct(product.id, { attributes }) : Promise.resolve(product),
    onSuccess: refresh,
  })
  return (
    <Section title="Attributes">
      <ErrorNotice error={save.error} title="Could not save the attributes" />
      {save.isSuccess ? <SuccessNotice>Attributes saved</SuccessNotice> : null}
      <QueryState query={definitions} what="attribute definitions">
        {(all) =>
          all.length === 0 ? (
            <p className="empty">
              No product attributes are defined. <Link to="/attributes">Define them on the Attributes screen</Link>.
            </p>
          ) : (
            <form
              className="form"
              noValidate
              onSubmit={(event) => {
                event.preventDefault()
                const found: Errors = {}
                const values = readAttributes(event.currentTarget, all, found)
                setErrors(found)
                if (Object.keys(found).length === 0) save.mutate(changedAttributes(product.attributes, values))
              }}
            >
              <AttributeFields definitions={all} values={product.attributes} errors={errors} />
              <div className="actions">
                <SubmitButton pending={save.isPending}>Save attributes</SubmitButton>
              </div>
            </form>
          )
        }
      </QueryState>
    </Section>
  )
}

/** The initial stock of a product or variant: up to the largest integer the API holds, which the message names. */
const STOCK = { min: 0, max: LARGEST_INTEGER }

// ——— Categories ———

function CategoryChoices({ categories, checked }: { categories: readonly Category[]; checked: readonly string[] }) {
  if (categories.length === 0) return <p className="muted">No categories yet.</p>
  return (
    <fieldset className="fieldset">
      <legend>Categories</legend>
      {categories.map((category) => (
        <CheckboxField key={category.id} label={category.name} name="category_ids" value={category.id} defaultChecked={checked.includes(category.id)} />
      ))}
    </fieldset>
  )
}

function CategoriesSection({ product }: { product: Product }) {
  const categories = useCategories()
  const refresh = useRefresh()
  const save = useMutation({
    // category_ids replaces the product's links whole.
    mutationFn: (ids: string[]) => client.updateProduct(product.id, { category_ids: ids }),
    onSuccess: refresh,
  })
  return (
    <Section title="Categories">
      <ErrorNotice error={save.error} title="Could not update the categories" />
      {save.isSuccess ? <SuccessNotice>Categories updated</SuccessNotice> : null}
      <QueryState query={categories} what="categories">
        {(all) => (
          <form
            className="form"
            onSubmit={(event) => {
              event.preventDefault()
              save.mutate(new FormData(event.currentTarget).getAll('category_ids').map(String))
            }}
          >
            <CategoryChoices categories={all} checked={product.categories.map((category) => category.id)} />
            <div className="actions">
              <SubmitButton pending={save.isPending}>Update categories</SubmitButton>
            </div>
          </form>
        )}
      </QueryState>
    </Section>
  )
}

// ——— Variants ———

function VariantsSection({ product }: { product: Product }) {
  const refresh = useRefresh()
  const [notice, setNotice] = useState('')
  const remove = useMutation({ mutationFn: (variantId: string) => client.deleteProductVariant(product.id, variantId), onSuccess: refresh })
  return (
    <Section
      title="Variants"
      actions={
        <>
          {product.options.length > 0 ? (
            <DialogButton label="Generate variants" title="Generate variants">
              {(close) => <GenerateVariantsForm product={product} onDone={(message) => (setNotice(message), close())} />}
            </DialogButton>
          ) : null}
          <DialogButton label="Add variant" title="Add a variant" className="button button-primary">
            {(close) => <VariantForm product={product} onDone={close} />}
          </DialogButton>
        </>
      }
    >
      <SuccessNotice>{notice}</SuccessNotice>
      <ErrorNotice error={remove.error} title="Could not delete the variant" />
      {product.variants.length === 0 ? (
        <p className="empty">
          No variants: the product is sold as it is.{product.options.length > 0 ? ' Generate them from its options.' : null}
        </p>
      ) : (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Title</th>
                <th scope="col">SKU</th>
                <th scope="col">Barcode</th>
                <th scope="col">Options</th>
                <th scope="col" className="number">
                  Price
                </th>
                <th scope="col" className="number">
                  Compare-at price
                </th>
                <th scope="col" className="number">
                  Stock
                </th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {product.variants.map((variant) => (
                <tr key={variant.id}>
                  <td>{variant.title}</td>
                  <td>{variant.sku ?? <span className="muted">—</span>}</td>
                  <td>{variant.barcode ?? <span className="muted">—</span>}</td>
                  <td>{optionsText(variant.options, ', ') || <span className="muted">—</span>}</td>
                  <td className="number">
                    {variant.price === null ? <span className="muted">Product’s price</span> : <Money amount={variant.price} currency={product.currency} />}
                  </td>
                  <td className="number">
                    {variant.compare_at_price === null ? (
                      <span className="muted">{product.compare_at_price === null ? '—' : 'Product’s'}</span>
                    ) : (
                      <Money amount={variant.compare_at_price} currency={product.currency} />
                    )}
                  </td>
                  <td className="number">{variant.inventory_quantity}</td>
                  <td>
                    <div className="actions">
                      <DialogButton label="Edit" title={`Edit ${variant.title}`}>
                        {(close) => <VariantForm product={product} variant={variant} onDone={close} />}
                      </DialogButton>
                      <button
                        type="button"
                        className="button button-danger"
                        disabled={remove.isPending && remove.variables === variant.id}
                        onClick={() => window.confirm(`Delete the variant “${variant.title}”?`) && remove.mutate(variant.id)}
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
      )}
    </Section>
  )
}

const optionsText = (options: Variant['options'], separator: string) =>
  Object.entries(options)
    .map(([name, value]) => `${name}=${value}`)
    .join(separator)

/** Options typed one per line as `name=value` (a product without options: they are free-form). */
function parseOptions(text: string): { ok: true; options: Record<string, string> } | { ok: false; message: string } {
  const options: Record<string, string> = {}
  for (const [index, line] of text.split('\n').entries()) {
    if (!line.trim()) continue
    const [name = '', ...rest] = line.split('=')
    const value = rest.join('=').trim()
    if (!name.trim() || !value) return { ok: false, message: `Line ${index + 1}: write name=value, such as size=M` }
    options[name.trim()] = value
  }
  return { ok: true, options }
}

/** The value a variant chose of an option (names matched case aside, as the API matches them). */
const chosenValue = (variant: Variant | undefined, name: string) =>
  Object.entries(variant?.options ?? {}).find(([chosen]) => chosen.toLowerCase() === name.toLowerCase())?.[1] ?? ''

/**
 * Adds a variant, or edits one. On a product with options it picks one value of each (an empty
 * title is then made of them, "M / Blue"); without, its options are free-form text. Its stock,
 * once created, is in "Stock by location".
 */
function VariantForm({ product, variant, onDone }: { product: Product; variant?: Variant; onDone(): void }) {
  const refresh = useRefresh()
  const definitions = useAttributeDefinitions('variant')
  const [errors, setErrors] = useState<Errors>({})
  const save = useMutation({
    mutationFn: (fields: Schemas['CreateVariantRequest']) =>
      variant ? client.updateProductVariant(product.id, variant.id, fields) : client.createProductVariant(product.id, fields),
    onSuccess: async () => {
      await refresh()
      onDone()
    },
  })
  const withOptions = product.options.length > 0

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault()
    const values = formText(event.currentTarget)
    const found: Errors = {}
    // An empty price is null: the variant sells at the product's price (and shows its compare-at price).
    const price = readMoney(values.price, product.currency, 'price', found)
    const compareAtPrice = readMoney(values.compare_at_price, product.currency, 'compare_at_price', found)
    const barcode = readBarcode(values.barcode, 'barcode', found)
    let options: Record<string, string> = {}
    if (withOptions) {
      for (const [index, option] of product.options.entries()) {
        const value = values[`option_${index}`]
        if (value) options[option.name] = value
        else found[`option_${index}`] = `Choose a value of ${option.name}`
      }
    } else {
      const parsed = parseOptions(values.options ?? '')
      if (parsed.ok) options = parsed.options
      else found.options = parsed.message
    }
    const title = values.title?.trim() || (withOptions ? product.options.map((option) => options[option.name]).filter(Boolean).join(' / ') : '')
    if (!title) found.title = 'Enter a title'
    const stock = readWhole(values.inventory_quantity, 'inventory_quantity', found, STOCK)
    const attributes = definitions.data ? readAttributes(event.currentTarget, definitions.data, found) : {}
    setErrors(found)
    if (Object.keys(found).length > 0) return
    const changedAttributeValues = changedAttributes(variant?.attributes ?? {}, attributes)
    save.mutate({
      title,
      sku: orNull(values.sku),
      barcode,
      price,
      compare_at_price: compareAtPrice,
      options,
      inventory_quantity: stock ?? undefined,
      ...(Object.keys(changedAttributeValues).length > 0 ? { attributes: changedAttributeValues } : {}),
    })
  }

  return (
    <form className="form" onSubmit={submit} noValidate>
      <ErrorNotice error={save.error} title="Could not save the variant" />
      <TextField
        label="Title"
        name="title"
        required={!withOptions}
        maxLength={500}
        defaultValue={variant?.title}
        hint={withOptions ? 'Empty: its values, such as M / Blue' : 'Such as Red / M'}
        error={errors.title}
      />
      {withOptions ? (
        <div className="form-row">
          {product.options.map((option, index) => (
            <SelectField
              key={option.id}
              label={option.name}
              name={`option_${index}`}
              defaultValue={option.values.find((value) => value.value.toLowerCase() === chosenValue(variant, option.name).toLowerCase())?.value ?? ''}
              options={[['', 'Choose…'], ...option.values.map((value) => [value.value, value.value] as const)]}
              error={errors[`option_${index}`]}
            />
          ))}
        </div>
      ) : (
        <TextAreaField
          label="Options"
          name="options"
          defaultValue={variant ? optionsText(variant.options, '\n') : ''}
          hint="One per line, as name=value: size=M"
          error={errors.options}
        />
      )}
      <div className="form-row">
        <TextField label="SKU" name="sku" maxLength={100} defaultValue={variant?.sku ?? ''} />
        <TextField
          label="Barcode"
          name="barcode"
          inputMode="numeric"
          autoComplete="off"
          defaultValue={variant?.barcode ?? ''}
          hint="GTIN: 8, 12, 13 or 14 digits"
          error={errors.barcode}
        />
      </div>
      <div className="form-row">
        <TextField
          label="Price"
          name="price"
          inputMode="decimal"
          autoComplete="off"
          defaultValue={variant && variant.price !== null ? moneyInputValue(variant.price, product.currency) : ''}
          hint={`In ${product.currency}. Empty: the product’s price.`}
          error={errors.price}
        />
        <TextField
          label="Compare-at price"
          name="compare_at_price"
          inputMode="decimal"
          autoComplete="off"
          defaultValue={variant && variant.compare_at_price !== null ? moneyInputValue(variant.compare_at_price, product.currency) : ''}
          hint="Empty: the product’s."
          error={errors.compare_at_price}
        />
      </div>
      {variant ? null : (
        <TextField label="Initial stock" name="inventory_quantity" inputMode="numeric" autoComplete="off" hint="Units at the default location" error={errors.inventory_quantity} />
      )}
      <ErrorNotice error={definitions.error} title="Could not load the variant attributes" />
      {definitions.data && definitions.data.length > 0 ? (
        <fieldset className="form-group">
          <legend>Attributes</legend>
          <AttributeFields definitions={definitions.data} values={variant?.attributes ?? {}} errors={errors} />
        </fieldset>
      ) : null}
      <div className="actions">
        <SubmitButton pending={save.isPending}>{variant ? 'Update variant' : 'Add variant'}</SubmitButton>
      </div>
    </form>
  )
}

// ——— Images ———

const IMAGE_TYPES: readonly ImageType[] = ['image/jpeg', 'image/png', 'image/webp', 'image/gif', 'image/avif']
const isImageType = (type: string): type is ImageType => (IMAGE_TYPES as readonly string[]).includes(type)

const megabytes = new Intl.NumberFormat(undefined, { style: 'unit', unit: 'megabyte', maximumFractionDigits: 1 })

/**
 * The browser-direct upload (docs/catalog.md, "Images and uploads"): the API names where to PUT the
 * file and with which headers, then makes the image of the upload.
 */
async function uploadImage(productId: string, file: File, contentType: ImageType, alt: string | null) {
  const upload = await client.createProductImageUpload(productId, { content_type: contentType })
  if (file.size > upload.max_bytes) throw new Error(`The file is too large: images up to ${megabytes.format(upload.max_bytes / 1e6)} are taken.`)
  const sent = await fetch(upload.url, { method: upload.method, headers: upload.headers, body: file })
  if (!sent.ok) throw new Error(`The file could not be sent (HTTP ${sent.status}). Try again.`)
  return client.createProductImage(productId, { upload_id: upload.id, alt })
}

function ImagesSection({ product }: { product: Product }) {
  const refresh = useRefresh()
  const [fileError, setFileError] = useState<string>()
  const upload = useMutation({
    mutationFn: ({ file, contentType, alt }: { file: File; contentType: ImageType; alt: string | null }) => uploadImage(product.id, file, contentType, alt),
    onSuccess: refresh,
  })
  const remove = useMutation({ mutationFn: (imageId: string) => client.deleteProductImage(product.id, imageId), onSuccess: refresh })
  const images = [...product.images].sort((a, b) => a.position - b.position)

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault()
    const form = event.currentTarget
    const data = new FormData(form)
    const file = data.get('file')
    if (!(file instanceof File) || file.size === 0) return setFileError('Choose an image file')
    if (!isImageType(file.type)) return setFileError('Choose a JPEG, PNG, WebP, GIF or AVIF image')
    setFileError(undefined)
    upload.mutate({ file, contentType: file.type, alt: orNull(String(data.get('alt') ?? '')) }, { onSuccess: () => form.reset() })
  }

  return (
    <Section title="Images">
      <ErrorNotice error={remove.error} title="Could not delete the image" />
      {images.length === 0 ? (
        <p className="empty">No images yet.</p>
      ) : (
        <div className="thumbs">
          {images.map((image) => (
            <figure key={image.id}>
              <img
                src={image.url}
                srcSet={image.thumbnails.map((thumbnail) => `${thumbnail.url} ${thumbnail.width}w`).join(', ') || undefined}
                sizes="8rem"
                alt={image.alt ?? ''}
              />
              <figcaption>{image.alt ?? 'No alt text'}</figcaption>
              <button
                type="button"
                className="button button-danger"
                disabled={remove.isPending && remove.variables === image.id}
                onClick={() => window.confirm('Delete this image?') && remove.mutate(image.id)}
              >
                Delete
              </button>
            </figure>
          ))}
        </div>
      )}
      <h3>Add an image</h3>
      <ErrorNotice error={upload.error} title="Could not upload the image" />
      {upload.isSuccess ? <SuccessNotice>Image uploaded</SuccessNotice> : null}
      <form className="form" onSubmit={submit} noValidate>
        <div className="form-row">
          <TextField label="Image file" name="file" type="file" accept="image/*" required hint="JPEG, PNG, WebP, GIF or AVIF" error={fileError} />
          <TextField label="Alt text" name="alt" maxLength={500} hint="What the image shows, for those who cannot see it" />
        </div>
        <div className="actions">
          <SubmitButton pending={upload.isPending}>Upload image</SubmitButton>
        </div>
      </form>
    </Section>
  )
}

// ——— Prices ———

const variantTitle = (product: Product, variantId: string | null) =>
  variantId === null ? 'All variants' : (product.variants.find((variant) => variant.id === variantId)?.title ?? 'Deleted variant')

function PricesSection({ product }: { product: Product }) {
  const refresh = useRefresh()
  const [page, setPage] = useState(1)
  const prices = useQuery({
    queryKey: ['products', product.id, 'prices', page],
    queryFn: ({ signal }) => client.listProductPrices(product.id, { page, per_page: 100 }, { signal }),
    placeholderData: keepPreviousData,
  })
  const remove = useMutation({ mutationFn: (priceId: string) => client.deleteProductPrice(product.id, priceId), onSuccess: refresh })
  return (
    <Section
      title="Prices"
      actions={
        <DialogButton label="Add price" title="Add a price" className="button button-primary">
          {(close) => <PriceForm product={product} onDone={close} />}
        </DialogButton>
      }
    >
      <p className="muted small">
        Prices in other currencies and quantity tiers. The price in {product.currency} from one unit is the product’s (or the variant’s) own price, set in its
        details.
      </p>
      <ErrorNotice error={remove.error} title="Could not delete the price" />
      <QueryState query={prices} what="prices">
        {({ prices: items, meta }) =>
          items.length === 0 ? (
            <p className="empty">No other prices.</p>
          ) : (
            <>
              <div className="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th scope="col" className="number">
                        Amount
                      </th>
                      <th scope="col">Currency</th>
                      <th scope="col" className="number">
                        From quantity
                      </th>
                      <th scope="col">Variant</th>
                      <th scope="col">Actions</th>
                    </tr>
                  </thead>
                  <tbody>
                    {items.map((price) => (
                      <tr key={price.id}>
                        <td className="number">
                          <Money amount={price.amount} currency={price.currency} />
                        </td>
                        <td>{price.currency}</td>
                        <td className="number">{price.min_quantity}</td>
                        <td>{variantTitle(product, price.variant_id)}</td>
                        <td>
                          <div className="actions">
                            <DialogButton label="Change" title="Change a price">
                              {(close) => <PriceForm product={product} price={price} onDone={close} />}
                            </DialogButton>
                            <button
                              type="button"
                              className="button button-danger"
                              disabled={remove.isPending && remove.variables === price.id}
                              onClick={() => window.confirm(`Delete the price in ${price.currency} from ${price.min_quantity}?`) && remove.mutate(price.id)}
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
              <PagePager label="Prices" meta={meta} onChange={setPage} />
            </>
          )
        }
      </QueryState>
    </Section>
  )
}

/**
 * Adds a price, or changes an existing one's amount: an entry with the variant, currency and
 * minimum quantity of an existing price replaces its amount.
 */
function PriceForm({ product, price, onDone }: { product: Product; price?: Price; onDone(): void }) {
  const refresh = useRefresh()
  const [errors, setErrors] = useState<Errors>({})
  const save = useMutation({
    mutationFn: (entry: Schemas['UpsertProductPricesRequest']['prices'][number]) => client.upsertProductPrices(product.id, { prices: [entry] }),
    onSuccess: async () => {
      await refresh()
      onDone()
    },
  })

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault()
    const values = formText(event.currentTarget)
    const found: Errors = {}
    const currency = price
      ? price.currency
      : readCurrency(values.currency, 'currency', found, { required: true, message: 'Enter a three-letter currency code such as EUR' })
    const amount = currency ? readMoney(values.amount, currency, 'amount', found, { required: true }) : null
    const minQuantity = price ? price.min_quantity : readWhole(values.min_quantity, 'min_quantity', found, { min: 1, max: 10_000, required: true })
    setErrors(found)
    if (Object.keys(found).length > 0 || !currency || amount === null || minQuantity === null) return
    save.mutate({
      currency,
      amount,
      min_quantity: minQuantity,
      variant_id: price ? price.variant_id : values.variant_id || null,
    })
  }

  return (
    <form className="form" onSubmit={submit} noValidate>
      <ErrorNotice error={save.error} title="Could not save the price" />
      {price ? (
        <Facts
          facts={[
            ['Currency', price.currency],
            ['From quantity', price.min_quantity],
            ['Variant', variantTitle(product, price.variant_id)],
          ]}
        />
      ) : (
        <div className="form-row">
          <TextField label="Currency" name="currency" maxLength={3} autoCapitalize="characters" autoComplete="off" required hint="Such as EUR" error={errors.currency} />
          <TextField label="From quantity" name="min_quantity" inputMode="numeric" autoComplete="off" defaultValue="1" hint="Above 1: a quantity tier" error={errors.min_quantity} />
        </div>
      )}
      <TextField
        label="Amount"
        name="amount"
        inputMode="decimal"
        autoComplete="off"
        required
        defaultValue={price ? moneyInputValue(price.amount, price.currency) : ''}
        hint="Per unit"
        error={errors.amount}
      />
      {price || product.variants.length === 0 ? null : (
        <SelectField
          label="Variant"
          name="variant_id"
          options={[['', 'All variants'], ...product.variants.map((variant) => [variant.id, variant.title] as const)]}
          hint="All variants: those without a price of their own here"
        />
      )}
      <div className="actions">
        <SubmitButton pending={save.isPending}>{price ? 'Update price' : 'Add price'}</SubmitButton>
      </div>
    </form>
  )
}

// ——— Stock by location ———

function StockSection({ product }: { product: Product }) {
  const [page, setPage] = useState(1)
  const levels = useQuery({
    queryKey: ['inventory', 'levels', { product_id: product.id, page }],
    queryFn: ({ signal }) => client.listInventoryLevels({ product_id: product.id, page, per_page: 100 }, { signal }),
    placeholderData: keepPreviousData,
  })
  return (
    <Section
      title="Stock by location"
      actions={
        <DialogButton label="Adjust at a location" title="Adjust stock at a location">
          {(close) => <AdjustStockForm product={product} onDone={close} />}
        </DialogButton>
      }
    >
      <p className="muted small">
        Available = on hand − reserved − committed − safety stock. The product’s sellable stock ({product.inventory_quantity}) is what active locations have available.
      </p>
      <QueryState query={levels} what="stock levels">
        {({ inventory_levels: items, meta }) =>
          items.length === 0 ? (
            <p className="empty">No stock anywhere yet.</p>
          ) : (
            <>
              <div className="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Item</th>
                      <th scope="col">Location</th>
                      <th scope="col" className="number">
                        On hand
                      </th>
                      <th scope="col" className="number">
                        Reserved
                      </th>
                      <th scope="col" className="number">
                        Committed
                      </th>
                      <th scope="col" className="number">
                        Safety stock
                      </th>
                      <th scope="col" className="number">
                        Available
                      </th>
                      <th scope="col">Actions</th>
                    </tr>
                  </thead>
                  <tbody>
                    {items.map((level) => (
                      <tr key={level.id}>
                        <td>{level.variant_id === null ? 'Product' : variantTitle(product, level.variant_id)}</td>
                        <td>{level.location_name}</td>
                        <td className="number">{level.on_hand}</td>
                        <td className="number">{level.reserved}</td>
                        <td className="number">{level.committed}</td>
                        <td className="number">{level.safety_stock}</td>
                        <td className="number">{level.available}</td>
                        <td>
                          <div className="actions">
                            <DialogButton label="Adjust" title={`Adjust stock at ${level.location_name}`}>
                              {(close) => <AdjustStockForm product={product} level={level} onDone={close} />}
                            </DialogButton>
                            <DialogButton label="Limits" title={`Safety stock at ${level.location_name}`}>
                              {(close) => <LevelLimitsForm level={level} onDone={close} />}
                            </DialogButton>
                          </div>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <PagePager label="Stock levels" meta={meta} onChange={setPage} />
            </>
          )
        }
      </QueryState>
    </Section>
  )
}

const REASONS: readonly (readonly [AdjustmentReason, string])[] = [
  ['correction', 'Correction'],
  ['cycle_count', 'Cycle count'],
  ['received', 'Received'],
  ['damaged', 'Damaged'],
  ['shrinkage', 'Shrinkage'],
  ['other', 'Other'],
]

/**
 * An adjustment of the units on hand: a count that sets them, or units added or removed. For a
 * level shown, of its item and location; else the admin picks them (an item gets a level at a
 * location the first time units are adjusted there). A product with variants is stocked per variant.
 */
function AdjustStockForm({ product, level, onDone }: { product: Product; level?: InventoryLevel; onDone(): void }) {
  const refresh = useRefresh()
  const [errors, setErrors] = useState<Errors>({})
  const locations = useQuery({
    queryKey: ['inventory', 'locations', 'all'],
    queryFn: ({ signal }) => listAll(client.paginate('listStockLocations', { per_page: 100 }, { signal }).items()),
    enabled: !level,
  })
  const adjust = useMutation({
    mutationFn: (body: Schemas['CreateInventoryAdjustmentRequest']) => client.createInventoryAdjustment(body),
    onSuccess: async () => {
      await refresh()
      onDone()
    },
  })

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault()
    const values = formText(event.currentTarget)
    const setCount = values.mode === 'on_hand'
    const found: Errors = {}
    // A count is 0 or more; units added are negative to remove some.
    const range = setCount ? { min: 0 } : { min: -1_000_000_000, message: 'Enter a whole number, negative to remove' }
    const units = readWhole(values.units, 'units', found, { ...range, max: 1_000_000_000, required: true })
    const locationId = level?.location_id ?? values.location_id
    if (!locationId) found.location_id = 'Choose a location'
    setErrors(found)
    if (units === null || !locationId) return
    adjust.mutate({
      product_id: product.id,
      variant_id: level ? level.variant_id : values.variant_id || null,
      location_id: locationId,
      ...(setCount ? { on_hand: units } : { quantity: units }),
      reason: values.reason as AdjustmentReason,
      note: orNull(values.note),
    })
  }

  return (
    <form className="form" onSubmit={submit} noValidate>
      <ErrorNotice error={adjust.error} title="Could not adjust the stock" />
      {level ? (
        <Facts
          facts={[
            ['Item', level.variant_id === null ? 'Product' : variantTitle(product, level.variant_id)],
            ['Location', level.location_name],
            ['On hand', level.on_hand],
          ]}
        />
      ) : (
        <>
          <ErrorNotice error={locations.error} title="Could not load the stock locations" />
          <div className="form-row">
            {product.variants.length > 0 ? (
              <SelectField label="Variant" name="variant_id" options={product.variants.map((variant) => [variant.id, variant.title] as const)} />
            ) : null}
            <SelectField
              label="Location"
              name="location_id"
              options={(locations.data ?? []).map((location) => [location.id, location.is_active ? location.name : `${location.name} (inactive)`] as const)}
              error={errors.location_id}
            />
          </div>
        </>
      )}
      <div className="form-row">
        <SelectField
          label="Change"
          name="mode"
          options={[
            ['on_hand', 'Set the count on hand'],
            ['quantity', 'Add or remove units'],
          ]}
        />
        <TextField label="Units" name="units" inputMode="numeric" autoComplete="off" required hint="A count, or units to add (negative to remove)" error={errors.units} />
      </div>
      <div className="form-row">
        <SelectField label="Reason" name="reason" options={REASONS} />
        <TextField label="Note" name="note" maxLength={500} />
      </div>
      <div className="actions">
        <SubmitButton pending={adjust.isPending}>Adjust stock</SubmitButton>
      </div>
    </form>
  )
}

/** A level's settings: safety stock (kept back from sale) and the threshold of the low-stock alert. */
function LevelLimitsForm({ level, onDone }: { level: InventoryLevel; onDone(): void }) {
  const refresh = useRefresh()
  const [errors, setErrors] = useState<Errors>({})
  const update = useMutation({
    mutationFn: (body: Schemas['UpdateInventoryLevelRequest']) => client.updateInventoryLevel(level.id, body),
    onSuccess: async () => {
      await refresh()
      onDone()
    },
  })

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault()
    const values = formText(event.currentTarget)
    const found: Errors = {}
    const safetyStock = readWhole(values.safety_stock, 'safety_stock', found, { min: 0, max: 1_000_000_000, required: true })
    // Empty: no alert.
    const threshold = readWhole(values.low_stock_threshold, 'low_stock_threshold', found, { min: 0, max: 1_000_000_000 })
    setErrors(found)
    if (safetyStock === null || Object.keys(found).length > 0) return
    update.mutate({ safety_stock: safetyStock, low_stock_threshold: threshold })
  }

  return (
    <form className="form" onSubmit={submit} noValidate>
      <ErrorNotice error={update.error} title="Could not update the level" />
      <TextField
        label="Safety stock"
        name="safety_stock"
        inputMode="numeric"
        autoComplete="off"
        required
        defaultValue={String(level.safety_stock)}
        hint="Units kept back: never sold"
        error={errors.safety_stock}
      />
      <TextField
        label="Low stock threshold"
        name="low_stock_threshold"
        inputMode="numeric"
        autoComplete="off"
        defaultValue={level.low_stock_threshold === null ? '' : String(level.low_stock_threshold)}
        hint="An alert when available units fall below it. Empty: no alert."
        error={errors.low_stock_threshold}
      />
      <div className="actions">
        <SubmitButton pending={update.isPending}>Update limits</SubmitButton>
      </div>
    </form>
  )
}
