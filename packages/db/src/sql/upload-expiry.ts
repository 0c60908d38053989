/** Presigned uploads whose address expired unused (POST /products/{id}/images/uploads): swept by the worker. */
import type { SqlClient } from '../transaction.js'

/** Uploads deleted per statement. */
export const EXPIRED_UPLOADS_BATCH = 500

const DELETE_EXPIRED = `delete from uploads where id in (select id from uploads where expires_at < now() order by expires_at limit ${EXPIRED_UPLOADS_BATCH})
returning storage_key as "storageKey"`

/** Deletes up to EXPIRED_UPLOADS_BATCH expired uploads; answers the keys of what was sent to them, to delete after. */
export async function deleteExpiredUploads(sql: SqlClient): Promise<string[]> {
  const rows = await sql.unsafe<{ storageKey: string }[]>(DELETE_EXPIRED, [], { prepare: true })
  return rows.map((row) => row.storageKey)
}
