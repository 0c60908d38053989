/**
 * The storefront listing scenarios' requests (bench/run.js): GET /products with filters, sorts,
 * facets, categories and collections drawn from the seeded catalog's vocabulary (seed.js), each
 * path distinct, many more than the catalog cache holds, so every request is answered by the
 * database. Deterministic: the same paths on every run.
 */
import { COLORS, DEPARTMENTS, MATERIALS, OPTION_COLOURS, OPTION_SIZES, ORIGINS, TAG_COUNT, VENDOR_COUNT, prng } from './seed.js'

const SORTS = ['newest', 'title', 'price_asc', 'price_desc', 'best_selling']
const COLLECTION_SORTS = [...SORTS, 'manual']

/** `count` distinct values of `make()`, or an error when it cannot find them. */
function distinct(count, make) {
  const found = new Set()
  for (let tries = 0; found.size < count; tries++) {
    if (tries > count * 50) throw new Error(`bench: only ${found.size} distinct listing requests of ${count}`)
    found.add(make())
  }
  return [...found]
}

function vocabulary(random) {
  const pick = (list) => list[Math.floor(random() * list.length)]
  const some = (list) => {
    const first = pick(list)
    const second = pick(list)
    return random() < 0.6 || first === second ? [first] : [first, second]
  }
  const int = (min, max) => min + Math.floor(random() * (max - min + 1))
  const day = (offset) => new Date(Date.UTC(2020, 0, 1) + offset * 86_400_000).toISOString().slice(0, 10)
  const tags = Array.from({ length: TAG_COUNT }, (_, n) => `tag-${n}`)
  const vendors = Array.from({ length: VENDOR_COUNT }, (_, n) => `Vendor ${n}`)
  /** One filter a storefront's sidebar sets: its query parameters. */
  const filters = [
    () => some(tags).map((tag) => ['tag', tag]),
    () => [['type', pick(Object.keys(DEPARTMENTS))]],
    () => some(vendors).map((vendor) => ['vendor', vendor]),
    () => some(OPTION_SIZES).map((size) => ['option', `Size:${size}`]),
    () => [['option', `Colour:${pick(OPTION_COLOURS)}`]],
    () => some(MATERIALS).map((material) => ['attr', `bench_material:${material}`]),
    () => some(COLORS).map((color) => ['attr', `bench_color:${color}`]),
    () => [['attr', `bench_origin:${pick(ORIGINS)}`]],
    () => {
      const low = int(0, 40) * 100
      return [['attr', `bench_weight_g:${low}..${low + int(5, 20) * 100}`]]
    },
    () => {
      const start = int(0, 1500)
      return [['attr', `bench_launched:${day(start)}..${day(start + int(60, 500))}`]]
    },
    () => {
      const low = int(0, 40) * 10
      return random() < 0.3 ? [['price_max', String(int(2, 10) * 10)]] : [['price_min', String(low)], ['price_max', String(low + int(2, 20) * 10)]]
    },
    () => [['available', 'true']],
    () => [['on_sale', 'true']],
  ]
  /** One to `most` different filters. */
  const someFilters = (most) => {
    const chosen = new Set()
    const wanted = int(1, most)
    while (chosen.size < wanted) chosen.add(pick(filters))
    return [...chosen].flatMap((filter) => filter())
  }
  return { pick, int, someFilters }
}

const pathOf = (params) => `/api/v1/products?${new URLSearchParams(params)}`

/**
 * The requests of each listing scenario, `count` of each: a filtered, sorted page in a category
 * (a department, with its subcategories, or a subcategory), the same with facet counts, filters
 * and facets over the whole catalog, and a collection's pages.
 */
export function listingPaths({ categories, collections, count = 3_000 }) {
  const random = prng(7)
  const { pick, int, someFilters } = vocabulary(random)
  const inCategory = (facets) => () =>
    pathOf([['category', pick(categories)], ...someFilters(2), ['sort', pick(SORTS)], ['page', String(int(1, 2))], ...(facets ? [['facets', 'true']] : [])])
  return {
    category: distinct(count, inCategory(false)),
    categoryFacets: distinct(count, inCategory(true)),
    allFacets: distinct(count, () => pathOf([...someFilters(3), ['sort', pick(SORTS)], ['facets', 'true']])),
    collection: distinct(Math.min(count, collections.length * COLLECTION_SORTS.length * 5 * 3), () =>
      pathOf([['collection', pick(collections)], ['sort', pick(COLLECTION_SORTS)], ['page', String(int(1, 5))], ['per_page', pick(['12', '24', '48'])]]),
    ),
  }
}

/** Problems with a listing answer, or [] when it is plausible. */
export function checkListing(body, { facets = false } = {}) {
  if (!body || !Array.isArray(body.products)) return ['body has no products array']
  if (typeof body.meta?.total !== 'number') return ['body has no meta.total']
  if (body.products.length > body.meta.total) return [`${body.products.length} products on a page of a total of ${body.meta.total}`]
  if (facets && (typeof body.facets !== 'object' || !Array.isArray(body.facets?.tags))) return ['body has no facets']
  if (!facets && body.facets !== undefined) return ['facets that were not asked for']
  return []
}
