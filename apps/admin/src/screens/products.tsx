/** The catalog: products found by words, category and state, a page at a time (cursor mode). */
import { keepPreviousData, useQuery } from '@tanstack/react-query'
import { useState, type FormEvent } from 'react'
import { Link } from 'react-router'
import { client } from '../api'
import { Badge, CursorPager, currentCursor, DateTime, Money, nextCursorOf } from '../components/data'
import { ErrorNotice, QueryState } from '../components/feedback'
import { CheckboxField, formText, SelectField, TextField } from '../components/forms'
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

export function Products() {
  const [search, setSearch] = useState('')
  const [category, setCategory] = useState('')
  const [includeInactive, setIncludeInactive] = useState(false)
  // The `after` values of the pages before this one; a new filter starts again from the first page.
  const [cursors, setCursors] = useState<string[]>([])
  const categories = useCategories()

  const filters = { search, category, include_inactive: includeInactive }
  const after = currentCursor(cursors)
  const products = useQuery({
    queryKey: ['products', 'list', { ...filters, after }],
    queryFn: ({ signal }) =>
      client.listProducts(
        { search: search || undefined, category: category || undefined, include_inactive: includeInactive || undefined, after },
        { signal },
      ),
    placeholderData: keepPreviousData,
  })

  function submitSearch(event: FormEvent<HTMLFormElement>) {
    event.preventDefault()
    setSearch(formText(event.currentTarget).search?.trim() ?? '')
    setCursors([])
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
          onChange={(event) => {
            setCategory(event.target.value)
            setCursors([])
          }}
          options={[['', 'All categories'], ...(categories.data ?? []).map((each) => [each.slug, each.name] as const)]}
        />
        <CheckboxField
          label="Include inactive"
          checked={includeInactive}
          onChange={(event) => {
            setIncludeInactive(event.target.checked)
            setCursors([])
          }}
        />
      </form>
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
                          <Badge value={product.is_active ? 'active' : 'inactive'} />
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
