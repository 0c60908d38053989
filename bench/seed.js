/**
 * Seeds the benchmark catalog: 100,000 active products in 200 categories (20 departments with
 * 9 subcategories each), with tags, a product type and a vendor each, five filterable attributes,
 * compare-at prices on some, options and variants on a fifth of them, and ten collections (five
 * automatic, five manual). Deterministic (seeded PRNG, and SQL over each product's number), so
 * every run measures the same data.
 *
 *   node bench/seed.js   # DATABASE_URL, else the embedded PostgreSQL (COMMERCE_DATA_DIR or .data),
 *                        # in its own database commerce_bench
 *
 * Idempotent: skips when the catalog already holds exactly PRODUCT_COUNT products.
 */
import { pathToFileURL } from 'node:url'
import postgres from 'postgres'
import { V7Generator } from 'uuidv7'
import { migrate, openDatabase } from '@commerce/db'

export const PRODUCT_COUNT = 100_000
export const CATEGORY_COUNT = 200
/** In the title or description of about 25 % of products; no other word contains it. */
export const COMMON_WORD = 'vintage'
export const COMMON_SHARE = 0.25
/** In exactly RARE_COUNT products. */
export const RARE_WORD = 'zanzibar'
export const RARE_COUNT = 20
/** The embedded cluster's database for the benchmark, so dev data in `commerce` is untouched. */
export const EMBEDDED_DATABASE = 'commerce_bench'

const BATCH = 10_000
const DAY_MS = 86_400_000
/** Tags: each product has one to three of them. */
export const TAG_COUNT = 40
export const VENDOR_COUNT = 50
/** The filterable attributes every product has a value of. */
export const BENCH_ATTRIBUTES = ['bench_material', 'bench_color', 'bench_origin', 'bench_weight_g', 'bench_launched']
/** Products with options (Size and Colour) and their variants: every fifth. */
export const OPTION_SIZES = ['S', 'M', 'L', 'XL']
export const OPTION_COLOURS = ['Black', 'White', 'Navy']

export const DEPARTMENTS = {
  Kitchen: ['Cookware', 'Bakeware', 'Knives', 'Utensils', 'Tableware', 'Glassware', 'Coffee & Tea', 'Storage', 'Small Appliances'],
  Home: ['Bedding', 'Bath', 'Rugs', 'Lighting', 'Clocks', 'Mirrors', 'Candles', 'Vases', 'Wall Art'],
  Furniture: ['Chairs', 'Tables', 'Sofas', 'Desks', 'Shelving', 'Beds', 'Cabinets', 'Benches', 'Stools'],
  Garden: ['Planters', 'Garden Tools', 'Outdoor Furniture', 'Grills', 'Hoses', 'Seeds', 'Bird Feeders', 'Lanterns', 'Fencing'],
  Clothing: ['Shirts', 'Trousers', 'Dresses', 'Jackets', 'Knitwear', 'Shorts', 'Skirts', 'Sleepwear', 'Swimwear'],
  Shoes: ['Sneakers', 'Boots', 'Sandals', 'Loafers', 'Slippers', 'Heels', 'Running Shoes', 'Hiking Boots', 'Clogs'],
  Accessories: ['Bags', 'Wallets', 'Belts', 'Hats', 'Scarves', 'Gloves', 'Sunglasses', 'Watches', 'Umbrellas'],
  Jewelry: ['Rings', 'Necklaces', 'Bracelets', 'Earrings', 'Brooches', 'Cufflinks', 'Anklets', 'Pendants', 'Charms'],
  Electronics: ['Headphones', 'Speakers', 'Chargers', 'Cables', 'Keyboards', 'Mice', 'Monitors', 'Webcams', 'Microphones'],
  Photography: ['Cameras', 'Lenses', 'Tripods', 'Camera Bags', 'Film', 'Flashes', 'Filters', 'Light Meters', 'Albums'],
  Music: ['Guitars', 'Pianos', 'Drums', 'Violins', 'Ukuleles', 'Amplifiers', 'Records', 'Turntables', 'Sheet Music'],
  Books: ['Novels', 'Cookbooks', 'Travel Guides', 'Poetry', 'Biographies', 'Art Books', 'Maps', 'Comics', 'Journals'],
  Toys: ['Puzzles', 'Board Games', 'Dolls', 'Building Blocks', 'Plush Toys', 'Model Kits', 'Kites', 'Marbles', 'Toy Cars'],
  Sports: ['Bicycles', 'Yoga', 'Camping', 'Fishing', 'Tennis', 'Golf', 'Climbing', 'Skateboards', 'Fitness'],
  Beauty: ['Skincare', 'Fragrance', 'Hair Care', 'Makeup', 'Nail Care', 'Shaving', 'Soaps', 'Brushes', 'Bath Oils'],
  Stationery: ['Notebooks', 'Pens', 'Pencils', 'Inks', 'Paper', 'Envelopes', 'Stamps', 'Desk Organizers', 'Calendars'],
  Crafts: ['Yarn', 'Fabric', 'Sewing', 'Beads', 'Paints', 'Canvas', 'Clay', 'Embroidery', 'Woodworking'],
  Pets: ['Dog Beds', 'Cat Toys', 'Leashes', 'Collars', 'Bowls', 'Aquariums', 'Bird Cages', 'Pet Carriers', 'Grooming'],
  Baby: ['Strollers', 'Cribs', 'Baby Clothes', 'Blankets', 'Rattles', 'Bibs', 'Car Seats', 'Nursery Decor', 'Teethers'],
  Travel: ['Suitcases', 'Backpacks', 'Travel Pillows', 'Passport Covers', 'Luggage Tags', 'Packing Cubes', 'Duffels', 'Toiletry Bags', 'Adapters'],
}

const ADJECTIVES = [
  'classic', 'modern', 'rustic', 'elegant', 'compact', 'sturdy', 'handmade', 'lightweight', 'premium', 'everyday',
  'deluxe', 'minimalist', 'portable', 'durable', 'cozy', 'sleek', 'artisan', 'oversized', 'foldable', 'timeless',
  'heritage', 'urban', 'coastal', 'nordic', 'industrial', 'bohemian', 'tailored', 'weathered', 'polished', 'organic',
]
export const MATERIALS = [
  'oak', 'walnut', 'bamboo', 'linen', 'cotton', 'wool', 'leather', 'ceramic', 'porcelain', 'glass',
  'copper', 'brass', 'steel', 'cast iron', 'marble', 'slate', 'cork', 'rattan', 'velvet', 'canvas',
  'silk', 'denim', 'pewter', 'teak', 'birch', 'stoneware', 'jute', 'suede', 'felt', 'aluminium',
]
export const COLORS = [
  'black', 'white', 'ivory', 'charcoal', 'navy', 'olive', 'sage', 'rust', 'mustard', 'teal',
  'burgundy', 'cream', 'sand', 'slate grey', 'forest green', 'sky blue', 'blush', 'terracotta', 'amber', 'plum',
]
const FEATURES = [
  'Made to last for years of daily use.',
  'Easy to clean and simple to care for.',
  'Ships in recyclable packaging.',
  'Designed by a small studio and finished by hand.',
  'A thoughtful gift for friends and family.',
  'Pairs well with the rest of the collection.',
  'Tested for quality before it leaves our workshop.',
  'Comes with a two year warranty.',
  'Each piece varies slightly in grain and tone.',
  'Folds flat for storage when not in use.',
  'Responsibly sourced materials throughout.',
  'Balanced weight and a comfortable grip.',
]
export const ORIGINS = ['Portugal', 'Japan', 'Denmark', 'Mexico', 'Italy', 'Vietnam', 'Peru', 'Morocco', 'Scotland', 'India']
const UNITS = ['g', 'kg', 'lb', 'oz']

/** mulberry32: a tiny seeded PRNG, so the data set is the same on every machine. */
export function prng(seed) {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const slugify = (text) =>
  text
    .toLowerCase()
    .replace(/&/g, 'and')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')

const capitalize = (words) => words.replace(/\b[a-z]/g, (c) => c.toUpperCase())

function buildCategories(ids) {
  const rows = []
  for (const [department, children] of Object.entries(DEPARTMENTS)) {
    const parent = {
      id: ids.generate().toString(),
      name: department,
      slug: slugify(department),
      description: `Everything in ${department.toLowerCase()}.`,
      parent_id: null,
    }
    rows.push(parent)
    for (const child of children) {
      rows.push({
        id: ids.generate().toString(),
        name: child,
        slug: `${parent.slug}-${slugify(child)}`,
        description: `${child} from our ${department.toLowerCase()} department.`,
        parent_id: parent.id,
      })
    }
  }
  if (rows.length !== CATEGORY_COUNT) throw new Error(`Expected ${CATEGORY_COUNT} categories, built ${rows.length}`)
  return rows
}

/** Which product indexes carry the rare word: RARE_COUNT spread over the whole id range. */
function rareIndexes() {
  const step = Math.floor(PRODUCT_COUNT / RARE_COUNT)
  return new Set(Array.from({ length: RARE_COUNT }, (_, i) => i * step + Math.floor(step / 2)))
}

/**
 * Product i of the catalog. Creation times spread evenly over the last year, so the UUIDv7 ids
 * (and the "newest first" order) look like a catalog that grew over time.
 */
function* products(categories) {
  const random = prng(42)
  const pick = (list) => list[Math.floor(random() * list.length)]
  const ids = new V7Generator()
  const rare = rareIndexes()
  // The title names the product's main category, so that one is a subcategory; a second one may be any.
  const leaves = categories.filter((c) => c.parent_id !== null)
  const start = Date.now() - 365 * DAY_MS
  const spacing = (365 * DAY_MS) / PRODUCT_COUNT
  for (let i = 0; i < PRODUCT_COUNT; i++) {
    const createdMs = Math.floor(start + i * spacing)
    const adjective = pick(ADJECTIVES)
    const material = pick(MATERIALS)
    const color = pick(COLORS)
    const category = pick(leaves)
    const noun = category.name.replace(/s$/, '')
    const common = random() < COMMON_SHARE
    // Half of the common-word products carry it in the title, half only in the description.
    const inTitle = common && random() < 0.5
    const title = `${inTitle ? `${capitalize(COMMON_WORD)} ` : ''}${capitalize(adjective)} ${capitalize(material)} ${noun} in ${capitalize(color)}`
    const sentences = [
      `A ${adjective} ${noun.toLowerCase()} in ${color} ${material}, made in ${pick(ORIGINS)}.`,
      pick(FEATURES),
      pick(FEATURES),
    ]
    if (common && !inTitle) sentences.splice(1, 0, `Inspired by ${COMMON_WORD} designs from the ${pick(['1950s', '1960s', '1970s', '1980s'])}.`)
    if (rare.has(i)) sentences.push(`Imported from ${capitalize(RARE_WORD)}.`)
    const categoryIds = [category.id]
    if (random() < 0.5) {
      const second = pick(categories)
      if (second.id !== category.id) categoryIds.push(second.id)
    }
    const slug = `${slugify(title)}-${i + 1}`
    yield {
      id: ids.generateOrResetCore(createdMs, 10_000).toString(),
      title,
      slug,
      description: sentences.join(' '),
      sku: `BENCH-${String(i + 1).padStart(6, '0')}`,
      priceMinor: 199 + Math.floor(random() * 49_800),
      currency: 'USD',
      inventory: Math.floor(random() * 500),
      weight: (0.05 + random() * 20).toFixed(2),
      weightUnit: pick(UNITS),
      imageUrl: `https://cdn.example.com/products/${slug}.jpg`,
      createdAt: new Date(createdMs).toISOString(),
      categoryIds,
    }
  }
}

/** Inserts one batch with one parameter per column (unnest), so there is no parameter limit. */
async function insertBatch(sql, batch) {
  const column = (name) => batch.map((row) => row[name])
  await sql`
    insert into products (id, title, slug, description, sku, price_minor, currency, inventory_quantity,
                          weight, weight_unit, is_active, image_url, image_url_explicit, created_at, updated_at)
    select id, title, slug, description, sku, price_minor, currency, inventory_quantity,
           weight, weight_unit, true, image_url, true, created_at, created_at
    from unnest(${column('id')}::uuid[], ${column('title')}::text[], ${column('slug')}::text[],
                ${column('description')}::text[], ${column('sku')}::text[], ${column('priceMinor')}::bigint[],
                ${column('currency')}::text[], ${column('inventory')}::int[], ${column('weight')}::numeric[],
                ${column('weightUnit')}::weight_unit[], ${column('imageUrl')}::text[], ${column('createdAt')}::timestamptz[])
      as t(id, title, slug, description, sku, price_minor, currency, inventory_quantity, weight, weight_unit, image_url, created_at)`
  const links = batch.flatMap((row) => row.categoryIds.map((categoryId) => [categoryId, row.id]))
  await sql`
    insert into product_categories (category_id, product_id)
    select * from unnest(${links.map((l) => l[0])}::uuid[], ${links.map((l) => l[1])}::uuid[])`
}

/**
 * What a storefront filters on, written in SQL over each product's number (its sku), with the
 * listing read model's triggers deferred and every product's listing row made once at the end.
 */
async function enrich(tx, log) {
  await tx`set local commerce.defer_listing = on`
  const n = tx`substr(sku, 7)::int`
  await tx`
    insert into attribute_definitions (id, key, name, type, choices, filterable, position)
    values (gen_random_uuid(), 'bench_material', 'Material', 'select', ${MATERIALS}, true, 0),
      (gen_random_uuid(), 'bench_color', 'Colour', 'select', ${COLORS}, true, 1),
      (gen_random_uuid(), 'bench_origin', 'Made in', 'select', ${ORIGINS}, true, 2)`
  await tx`
    insert into attribute_definitions (id, key, name, type, unit, filterable, position)
    values (gen_random_uuid(), 'bench_weight_g', 'Weight', 'integer', 'g', true, 3), (gen_random_uuid(), 'bench_launched', 'Launched', 'date', null, true, 4)`
  const departments = Object.keys(DEPARTMENTS)
  await tx`
    update products set
      tags = array(select 'tag-' || ((${n} * 7 + k * 13) % ${TAG_COUNT}) from generate_series(0, ${n} % 3) as k),
      product_type = (${departments}::text[])[1 + ${n} % ${departments.length}],
      vendor = 'Vendor ' || (${n} * 31 % ${VENDOR_COUNT}),
      compare_at_price_minor = case when ${n} % 7 = 0 then price_minor + price_minor / 4 end,
      attributes = jsonb_build_object(
        'bench_material', (${MATERIALS}::text[])[1 + ${n} * 3 % ${MATERIALS.length}],
        'bench_color', (${COLORS}::text[])[1 + ${n} * 5 % ${COLORS.length}],
        'bench_origin', (${ORIGINS}::text[])[1 + ${n} * 11 % ${ORIGINS.length}],
        'bench_weight_g', 50 + ${n} * 37 % 5000,
        'bench_launched', to_char(date '2020-01-01' + ${n} % 2000, 'YYYY-MM-DD'))`
  // Every fifth product: Size and Colour, a variant of every combination, each with stock.
  await tx`
    update products set options = jsonb_build_array(
      jsonb_build_object('id', gen_random_uuid(), 'name', 'Size', 'values',
        (select jsonb_agg(jsonb_build_object('id', gen_random_uuid(), 'value', v, 'swatchColor', null, 'swatchImageUrl', null)) from unnest(${OPTION_SIZES}::text[]) v)),
      jsonb_build_object('id', gen_random_uuid(), 'name', 'Colour', 'values',
        (select jsonb_agg(jsonb_build_object('id', gen_random_uuid(), 'value', v, 'swatchColor', null, 'swatchImageUrl', null)) from unnest(${OPTION_COLOURS}::text[]) v)))
    where ${n} % 5 = 0`
  await tx`
    insert into product_variants (id, product_id, title, sku, inventory_quantity, options, option_value_ids)
    select gen_random_uuid(), p.id, (s.value->>'value') || ' / ' || (c.value->>'value'), p.sku || '-' || (s.value->>'value') || '-' || (c.value->>'value'),
      (substr(p.sku, 7)::int + length(s.value->>'value') * 3 + length(c.value->>'value')) % 40,
      jsonb_build_object('Size', s.value->>'value', 'Colour', c.value->>'value'),
      (select array_agg(x order by x) from unnest(array[(s.value->>'id')::uuid, (c.value->>'id')::uuid]) x)
    from products p, jsonb_array_elements(p.options->0->'values') s, jsonb_array_elements(p.options->1->'values') c
    where jsonb_array_length(p.options) = 2`
  log('seed: listing rows...')
  const ids = await tx`select id from products order by id`
  for (let i = 0; i < ids.length; i += BATCH) {
    const batch = ids.slice(i, i + BATCH).map((row) => row.id)
    await tx`select refresh_product_listing(${batch}::uuid[]), refresh_product_list_items(${batch}::uuid[])`
  }
  // Five automatic collections and five manual ones of 200 products each.
  await tx`
    insert into collections (id, title, slug, kind, match, sort, rules)
    select gen_random_uuid(), 'Automatic ' || k, 'bench-automatic-' || k, 'automatic', 'all', 'best_selling', '[]' from generate_series(1, 5) k`
  await tx`
    insert into collection_rules (collection_id, position, field, operator, name, value, currency)
    select c.id, 0, 'tag', 'equals', null, 'tag-' || (substr(c.slug, 16)::int * 3), null from collections c where c.kind = 'automatic'
    union all
    select c.id, 1, 'price', 'less_than', null, '20000', 'USD' from collections c where c.kind = 'automatic'`
  await tx`select refresh_collection_membership(null, null)`
  await tx`
    insert into collections (id, title, slug, kind, sort) select gen_random_uuid(), 'Manual ' || k, 'bench-manual-' || k, 'manual', 'manual' from generate_series(1, 5) k`
  await tx`
    insert into collection_products (collection_id, product_id, position)
    select c.id, p.id, p.rank from collections c
    cross join lateral (select id, row_number() over (order by md5(id::text || c.slug)) as rank from products order by md5(id::text || c.slug) limit 200) p
    where c.kind = 'manual'`
}

/**
 * Migrates and seeds `url`. Returns { seeded, ms }. Refuses to touch a catalog that holds other
 * products, so it never mixes into (or wipes) real data.
 */
export async function seed(url, { log = console.log } = {}) {
  await migrate(url)
  const sql = postgres(url, { max: 1, onnotice: () => {} })
  try {
    const [{ count }] = await sql`select count(*)::int as count from products`
    if (count === PRODUCT_COUNT) {
      const [{ enriched }] = await sql`select exists (select 1 from attribute_definitions where key = 'bench_material') as enriched`
      if (enriched) {
        log(`seed: catalog already holds ${count} products, skipping`)
        return { seeded: false, ms: 0 }
      }
      // A catalog seeded before tags, options and attributes: given them now.
      const started = performance.now()
      await sql.begin((tx) => enrich(tx, log))
      await sql`vacuum (analyze)`
      const ms = Math.round(performance.now() - started)
      log(`seed: enriched in ${(ms / 1000).toFixed(1)} s`)
      return { seeded: true, ms }
    }
    if (count !== 0) {
      throw new Error(
        `seed: the database holds ${count} products (expected 0 or ${PRODUCT_COUNT}); point DATABASE_URL at an empty database`,
      )
    }
    const started = performance.now()
    log(`seed: inserting ${PRODUCT_COUNT} products in ${CATEGORY_COUNT} categories...`)
    await sql.begin(async (tx) => {
      await tx`set local commerce.defer_listing = on`
      const categories = buildCategories(new V7Generator())
      await tx`insert into categories ${tx(categories, 'id', 'name', 'slug', 'description', 'parent_id')}`
      let batch = []
      for (const product of products(categories)) {
        batch.push(product)
        if (batch.length === BATCH) {
          await insertBatch(tx, batch)
          batch = []
        }
      }
      if (batch.length > 0) await insertBatch(tx, batch)
      await enrich(tx, log)
    })
    // VACUUM too: until the visibility map is set, index-only scans (count(*)) visit the heap, and
    // numbers would depend on whether autovacuum has happened to run yet.
    await sql`vacuum (analyze)`
    const ms = Math.round(performance.now() - started)
    log(`seed: done in ${(ms / 1000).toFixed(1)} s`)
    return { seeded: true, ms }
  } finally {
    await sql.end({ timeout: 5 })
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const opened = await openDatabase({
    url: process.env.DATABASE_URL,
    dataDir: process.env.COMMERCE_DATA_DIR,
    database: EMBEDDED_DATABASE,
  })
  try {
    await seed(opened.url)
  } finally {
    await opened.stop()
  }
}

/**
 * Adds `units` on hand for each product at the default location and, for `locations` above one,
 * as many again at each bench location (made once, after the default by priority), so each
 * checkout reads and allocates among that many levels. Written as 'received' movements, with
 * the sellable totals in step (docs/inventory.md), as the API's adjustments would.
 */
export async function stockUp(monitor, products, { units, locations = 1 }) {
  const names = Array.from({ length: locations - 1 }, (_, index) => `Bench location ${index + 2}`)
  for (const [index, name] of names.entries()) {
    await monitor`insert into stock_locations (id, name, priority) values (gen_random_uuid(), ${name}, ${index + 1})
      on conflict (lower(name)) do nothing`
  }
  const where = monitor`location_id in (select id from stock_locations where is_default or name = any(${names}))`
  await monitor`
    insert into inventory_levels (id, location_id, product_id)
    select gen_random_uuid(), l.id, p.id from stock_locations l cross join unnest(${products}::uuid[]) as p(id)
    where l.is_default or l.name = any(${names})
    on conflict (item_id, location_id) do nothing`
  const levels = await monitor`
    update inventory_levels set on_hand = on_hand + ${units} where item_id = any(${products}::uuid[]) and ${where} returning id`
  await monitor`insert into inventory_movements (level_id, on_hand_delta, reason) select unnest(${levels.map((level) => level.id)}::uuid[]), ${units}, 'received'`
  await monitor`
    update products p set inventory_quantity = (
      select sum(greatest(0, l.on_hand - l.reserved - l.committed - l.safety_stock)) from inventory_levels l
      join stock_locations loc on loc.id = l.location_id where loc.is_active and l.item_id = p.id)
    where p.id = any(${products}::uuid[])`
}
