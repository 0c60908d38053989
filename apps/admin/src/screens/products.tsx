/** The catalog: products found by words, category, tag, type, vendor and status, in the order asked, a page at a time (cursor mode). */
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState, type FormEvent } from 'react'
import { Link } from 'react-router'
import { client, type Schemas } from '../api'
import { Badge, CursorPager, currentCursor, DateTime, Money, nextCursorOf } from '../components/data'
import { ErrorNotice, QueryState } from '../components/feedback'
import { formText, SelectField, TextField } from '../components/forms'
import { Page } from '../components/page'

/** Every item of a paged list (lists of settings, such as categories, that a screen shows whole). */
export async function listAll<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = []
  for await (const item of items) all.push(item)
  return all
}

/** All categories, by name, for filters and for a product's links. */
export function useCategories() {
  return useQuery({
    queryKey: ['categories', 'all'],
    queryFn: ({ signal }) => listAll(client.paginate('listCategories', { per_page: 100 }, { signal }).items()),
  })
}

/**
 * After any catalog write: products (lists and each one), stock levels and collections (their
 * rules match products' fields, their counts follow) show the change.
 */
export function useCatalogRefresh() {
  const queryClient = useQueryClient()
  return () =>
    Promise.all(['products', 'inventory', 'collections'].map((area) => queryClient.invalidateQueries({ queryKey: [area] })))
}

/**
 * A product's status as staff read it: draft, archived, active (public now), or scheduled: active,
 * its publication still to come (the worker publishes it then).
 */
export function ProductStatusBadge({ product }: { product: Pick<Schemas['Product'], 'status' | 'published_at' | 'is_active'> }) {
  if (product.status === 'active' && !product.is_active && product.published_at && Date.parse(product.published_at) > Date.now()) {
    return <Badge value="scheduled" label={`Scheduled ${new Date(product.published_at).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })}`} />
  }
  return <Badge value={product.status} />
}

type ProductSort = NonNullable<NonNullable<Parameters<typeof client.listProducts>[0]>['sort']>
type Facets = NonNullable<Schemas['ProductList']['facets']>

/** The orders staff pick; without one, the API's default: newest first, or by relevance to a search. */
const SORTS: readonly (readonly [ProductSort, string])[] = [
  ['title', 'Title, A to Z'],
  ['price_asc', 'Price, low to high'],
  ['price_desc', 'Price, high to low'],
  ['best_selling', 'Best selling'],
]

/** The choices of a filter: the values the catalog has (with how many products), the chosen one kept. */
function facetOptions(values: Facets['tags'] | undefined, chosen: string, all: string): (readonly [string, string])[] {
  const options: (readonly [string, string])[] = (values ?? []).map((value) => [value.value, `${value.label} (${value.count})`])
  if (chosen && !options.some(([value]) => value === chosen)) options.unshift([chosen, chosen])
  return [['', all], ...options]
}

export function Products() {
  const [search, setSearch] = useState('')
  const [category, setCategory] = useState('')
  const [includeInactive, setIncludeInactive] = useState(false)
  const [tag, setTag] = useState('')
  const [type, setType] = useState('')
  const [vendor, setVendor] = useState('')
  const [sort, setSort] = useState<ProductSort | ''>('')
  // The `after` values of the pages before this one; a new filter starts again from the first page.
  const [cursors, setCursors] = useState<string[]>([])
  const categories = useCategories()

  const query = {
    search: search || undefined,
    category: category || undefined,
    include_inactive: includeInactive || undefined,
    tag: tag ? [tag] : undefined,
    type: type ? [type] : undefined,
    vendor: vendor ? [vendor] : undefined,
    // A search is by relevance unless another order is asked.
    sort: sort || undefined,
  }
  const after = currentCursor(cursors)
  const products = useQuery({
    queryKey: ['products', 'list', { ...query, after }],
    queryFn: ({ signal }) => client.listProducts({ ...query, after }, { signal }),
    placeholderData: keepPreviousData,
  })
  // The values each filter can take, counted given the others (facets answer in page mode only).
  const facets = useQuery({
    queryKey: ['products', 'facets', query],
    queryFn: ({ signal }) => client.listProducts({ ...query, facets: true, per_page: 1 }, { signal }),
    placeholderData: keepPreviousData,
    select: (list) => list.facets,
  })

  /** A filter changed: from the first page again. */
  const filter = <T,>(set: (value: T) => void) => (value: T) => {
    set(value)
    setCursors([])
  }

  function submitSearch(event: FormEvent<HTMLFormElement>) {
    event.preventDefault()
    filter(setSearch)(formText(event.currentTarget).search?.trim() ?? '')
  }

  return (
    <Page
      title="Products"
      actions={
        <Link className="button button-primary" to="/products/new">
          New product
        </Link>
      }
    >
      <form className="filters" role="search" onSubmit={submitSearch}>
        <TextField label="Search products" name="search" type="search" defaultValue={search} />
        <button type="submit" className="button">
          Search
        </button>
        <SelectField
          label="Category"
          value={category}
          onChange={(event) => filter(setCategory)(event.target.value)}
          options={[['', 'All categories'], ...(categories.data ?? []).map((each) => [each.slug, each.name] as const)]}
        />
        <SelectField
          label="Status"
          value={includeInactive ? 'any' : 'public'}
          onChange={(event) => filter(setIncludeInactive)(event.target.value === 'any')}
          options={[
            ['public', 'In the shop now'],
            ['any', 'Any status'],
          ]}
        />
        <SelectField label="Tag" value={tag} onChange={(event) => filter(setTag)(event.target.value)} options={facetOptions(facets.data?.tags, tag, 'All tags')} />
        <SelectField label="Type" value={type} onChange={(event) => filter(setType)(event.target.value)} options={facetOptions(facets.data?.types, type, 'All types')} />
        <SelectField
          label="Vendor"
          value={vendor}
          onChange={(event) => filter(setVendor)(event.target.value)}
          options={facetOptions(facets.data?.vendors, vendor, 'All vendors')}
        />
        <SelectField
          label="Sort"
          value={!search && sort === 'newest' ? '' : sort}
          onChange={(event) => filter(setSort)(event.target.value as ProductSort | '')}
          options={search ? [['', 'Relevance'], ['newest', 'Newest'], ...SORTS] : [['', 'Newest'], ...SORTS]}
        />
      </form>
      <ErrorNotice error={facets.error} title="Could not load the filters’ values" />
      <ErrorNotice error={categories.error} title="Could not load the categories" />
      <QueryState query={products} what="products">
        {({ products: items, meta }) => (
          <>
            {items.length === 0 ? (
              <p className="empty">No products match.</p>
            ) : (
              <div className="table-wrap" aria-busy={products.isPlaceholderData || undefined}>
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Title</th>
                      <th scope="col">SKU</th>
                      <th scope="col" className="number">
                        Price
                      </th>
                      <th scope="col" className="number">
                        Stock
                      </th>
                      <th scope="col">Status</th>
                      <th scope="col">Updated</th>
                    </tr>
                  </thead>
                  <tbody>
                    {items.map((product) => (
                      <tr key={product.id}>
                        <td>
                          <Link to={`/products/${product.id}`}>{product.title}</Link>
                        </td>
                        <td>{product.sku ?? <span className="muted">—</span>}</td>
                        <td className="number">
                          <Money amount={product.price} currency={product.currency} />
                        </td>
                        <td className="number">{product.inventory_quantity}</td>
                        <td>
                          <ProductStatusBadge product={product} />
                        </td>
                        <td>
                          <DateTime value={product.updated_at} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
            <CursorPager label="Products" cursors={cursors} nextCursor={nextCursorOf(meta)} onChange={setCursors} />
          </>
        )}
      </QueryState>
    </Page>
  )
}
