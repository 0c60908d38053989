/** User accounts for admins: list and read them, change a role, disable or enable one. */
import { and, eq, sql, type SQL } from 'drizzle-orm'
import type { ListUsersQuery, UpdateUser, User, UserList } from '@commerce/domain'
import { findUserById, updateUser, userSnapshot, users, type Database } from '@commerce/db'
import { notFound } from '../../errors.js'
import { key, keyset, listTable } from '../../list-cursor.js'

/** Newest first (UUIDv7 ids). */
const USERS_KEYSET = keyset('users', 'desc', [key.uuid(users.id)])

export function createUserService(db: Database) {
  return {
    /** Newest first; `role` and `email` (exact, case-insensitive) filter. */
    async list(query: ListUsersQuery): Promise<UserList> {
      const conditions: (SQL | undefined)[] = []
      if (query.role !== undefined) conditions.push(eq(users.role, query.role))
      if (query.email !== undefined) conditions.push(sql`lower(${users.email}) = lower(${query.email})`)
      const { rows, meta } = await listTable(db, USERS_KEYSET, users, and(...conditions), query)
      return { users: rows.map(userSnapshot), meta }
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
