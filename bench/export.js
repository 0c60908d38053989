/**
 * The catalog export of `run.js` (scenario `export`): one client walks every active product, page
 * after page, by cursor (`?after=`) and by page number (`?page=`), each page waiting for the one
 * before, as an export job would. Rows per second over the whole walk, and per-page latencies.
 */

const TIMEOUT_MS = 30_000

async function getPage(url) {
  const started = performance.now()
  const response = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) })
  const text = await response.text()
  const ms = performance.now() - started
  if (response.status !== 200) throw new Error(`${url} -> ${response.status} ${text.slice(0, 300)}`)
  return { body: JSON.parse(text), ms }
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]

/**
 * Walks the whole list in `mode` ('cursor' or 'offset') at `perPage`, checking what it meets: every
 * row once, newest first (ids strictly descending), `expectedRows` in all.
 */
export async function walkCatalog(apiBase, { mode, perPage, expectedRows }) {
  const pages = []
  const problems = []
  let rows = 0
  let previousId
  const seen = new Set()
  const started = performance.now()
  let after = ''
  for (let page = 1; ; page++) {
    const query = mode === 'cursor' ? `after=${after}` : `page=${page}`
    const { body, ms } = await getPage(`${apiBase}/api/v1/products?per_page=${perPage}&${query}`)
    pages.push(ms)
    for (const product of body.products) {
      if (seen.has(product.id)) problems.push(`${product.id} met twice (page ${page})`)
      if (previousId !== undefined && product.id >= previousId) problems.push(`${product.id} out of order (page ${page})`)
      seen.add(product.id)
      previousId = product.id
    }
    rows += body.products.length
    if (mode === 'cursor' ? body.meta.next_cursor === null : page >= body.meta.total_pages) break
    if (mode === 'cursor') after = body.meta.next_cursor
  }
  const seconds = (performance.now() - started) / 1000
  if (rows !== expectedRows) problems.push(`${rows} rows, expected ${expectedRows}`)
  const sorted = [...pages].sort((a, b) => a - b)
  // The first and last tenth of the walk: an offset's cost grows with its depth, a cursor's does not.
  const tenth = Math.max(1, Math.floor(pages.length / 10))
  const mean = (values) => values.reduce((sum, value) => sum + value, 0) / values.length
  return {
    mode,
    perPage,
    rows,
    pages: pages.length,
    seconds,
    rowsPerSec: rows / seconds,
    pageMs: {
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      max: sorted.at(-1),
      firstTenthMean: mean(pages.slice(0, tenth)),
      lastTenthMean: mean(pages.slice(-tenth)),
    },
    problems: problems.slice(0, 10),
  }
}
