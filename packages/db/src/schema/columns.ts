/** Column groups every table reuses: a UUIDv7 primary key (index locality) and timestamps. */
import { randomFillSync } from 'node:crypto'
import { timestamp, uuid } from 'drizzle-orm/pg-core'
import { V7Generator } from 'uuidv7'

// The random bits of ids, drawn from the system's CSPRNG 4 KiB at a time: the library's own
// source asks crypto.getRandomValues for 32 bytes at a time, a measurable cost on hot paths
// that make several ids per request.
const random = new Uint32Array(1024)
let cursor = random.length
const generator = new V7Generator({
  nextUint32() {
    if (cursor === random.length) {
      randomFillSync(random)
      cursor = 0
    }
    return random[cursor++]!
  },
})

/** A new primary key, for a service that needs a row's id before inserting it. */
export const newId = (): string => generator.generate().toString()
export const id = () => uuid('id').primaryKey().$defaultFn(newId)
export const createdAt = () => timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow()
export const updatedAt = () =>
  timestamp('updated_at', { withTimezone: true, mode: 'date' })
    .notNull()
    .defaultNow()
    .$onUpdate(() => new Date())
