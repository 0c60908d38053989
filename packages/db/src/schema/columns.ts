/** Column groups every table reuses: a UUIDv7 primary key (index locality) and timestamps. */
import { timestamp, uuid } from 'drizzle-orm/pg-core'
import { uuidv7 } from 'uuidv7'

/** A new primary key, for a service that needs a row's id before inserting it. */
export const newId = (): string => uuidv7()
export const id = () => uuid('id').primaryKey().$defaultFn(newId)
export const createdAt = () => timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow()
export const updatedAt = () =>
  timestamp('updated_at', { withTimezone: true, mode: 'date' })
    .notNull()
    .defaultNow()
    .$onUpdate(() => new Date())
