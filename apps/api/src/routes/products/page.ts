/** A page of the product list as the lister answers it, and how it is sent. */
import type { ProductList } from '@commerce/domain'

/**
 * A public page in the shop's own language with its items as their stored JSON text (sent as
 * they are: no rows read and mapped, no serializing), instead of as objects.
 */
export type StoredPage = Omit<ProductList, 'products'> & { json: string[]; ids: string[] }

/** A page as answered, with the locale each product's text is shown in. */
export type ProductPage = (ProductList | StoredPage) & { shownLocales: (string | null)[] }

/** The answer's text of a stored page, as the list's schema would have serialized it. */
export function storedPageText({ json, meta, facets }: StoredPage): string {
  return `{"products":[${json.join(',')}],"meta":${JSON.stringify(meta)}${facets === undefined ? '' : `,"facets":${JSON.stringify(facets)}`}}`
}

/** The ids of a page's products, in its order. */
export const pageIds = (page: ProductList | StoredPage): string[] => ('json' in page ? page.ids : page.products.map((product) => product.id))

/** A page with its items as objects (a stored page's parsed), for what cuts or reads them (`fields`). */
export function pageObjects(page: ProductList | StoredPage): ProductList {
  if (!('json' in page)) return page
  const { json, ids: _ids, ...rest } = page
  return { ...rest, products: json.map((text) => JSON.parse(text) as ProductList['products'][number]) }
}
