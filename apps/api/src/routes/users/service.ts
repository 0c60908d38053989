/** User accounts for admins: list and read them, change a role, disable or enable one. */
import { and, count, desc, eq, sql, type SQL } from 'drizzle-orm'
import type { ListUsersQuery, UpdateUser, User, UserList } from '@commerce/domain'
import { findUserById, updateUser, userSnapshot, users, type Database } from '@commerce/db'
import { notFound } from '../../errors.js'
import { pageMeta } from '../../list-totals.js'

export function createUserService(db: Database) {
  return {
    /** Newest first; `role` and `email` (exact, case-insensitive) filter. */
    async list(query: ListUsersQuery): Promise<UserList> {
      const page = query.page ?? 1
      const perPage = query.per_page ?? 20
      const conditions: (SQL | undefined)[] = []
      if (query.role !== undefined) conditions.push(eq(users.role, query.role))
      if (query.email !== undefined) conditions.push(sql`lower(${users.email}) = lower(${query.email})`)
      const where = and(...conditions)
      const [rows, [counted]] = await Promise.all([
        db.select().from(users).where(where).orderBy(desc(users.id)).limit(perPage).offset((page - 1) * perPage),
        db.select({ total: count() }).from(users).where(where),
      ])
      return { users: rows.map(userSnapshot), meta: pageMeta(page, perPage, counted!.total) }
    },

    async get(id: string): Promise<User> {
      const row = await findUserById(db, id)
      if (!row) throw notFound('User')
      return userSnapshot(row)
    },

    async update(id: string, body: UpdateUser): Promise<User> {
      const row = await updateUser(db, id, body)
      if (!row) throw notFound('User')
      return userSnapshot(row)
    },
  }
}
