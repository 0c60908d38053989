import autocannon from 'autocannon'
import postgres from 'postgres'
import { listingPaths } from './listing.js'
const sql = postgres(process.env.DATABASE_URL)
const categories = (await sql`select slug from categories order by slug`).map((r) => r.slug)
const collections = (await sql`select slug from collections where published order by slug`).map((r) => r.slug)
await sql.end()
const paths = listingPaths({ categories, collections })[process.argv[3]]
let i = 0
const r = await autocannon({ url: process.argv[2], connections: 64, duration: Number(process.argv[4] ?? 10), requests: [{ setupRequest: (req) => ({ ...req, path: paths[i++ % paths.length] }) }] })
console.log(r.requests.average, 'req/s', 'p99', r.latency.p99, 'bytes', Math.round(r.throughput.average / r.requests.average), 'non2xx', r.non2xx)
