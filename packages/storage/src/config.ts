/**
 * The file storage the environment chooses, read the same way by the API and the worker: a local
 * folder (the default, under the data directory) or an S3-compatible bucket when STORAGE=s3. A
 * problem names its variable and never shows a secret.
 */
import { join } from 'node:path'
import { boolean, integer, oneOf, text, url, type Environment } from '@commerce/runtime/config'
import { diskStorage } from './disk.js'
import { s3Storage } from './s3.js'
import type { FileStorage } from './types.js'

export const STORAGE_VARIABLES = {
  STORAGE: oneOf(['disk', 's3'], 'disk'),
  /** Disk: the folder; by default `<data directory>/uploads`. */
  UPLOADS_DIR: text(),
  /** The largest file an upload may be, in bytes (10 MiB). */
  UPLOAD_MAX_BYTES: integer({ min: 1024, max: 1024 * 1024 * 1024, default: 10 * 1024 * 1024 }),
  /** Where browsers fetch files: disk, by default `<PUBLIC_URL>/files`; S3, by default the bucket's own address. */
  FILES_PUBLIC_URL: url(['http:', 'https:'], 'must be an http:// or https:// URL'),
  S3_BUCKET: text(),
  S3_REGION: text({ default: 'us-east-1' }),
  S3_ENDPOINT: url(['http:', 'https:'], 'must be an http:// or https:// URL'),
  S3_PREFIX: text(),
  S3_FORCE_PATH_STYLE: boolean(false),
  S3_ACCESS_KEY_ID: text(),
  S3_SECRET_ACCESS_KEY: text({ secret: true }),
}

/** The storage the variables choose and what is wrong with them together. */
export function chooseStorage(
  values: Environment<typeof STORAGE_VARIABLES>,
  defaults: { dataDir: string; publicUrl: string },
): { storage: FileStorage; problems: string[] } {
  const problems: string[] = []
  const trim = (address: string) => address.replace(/\/+$/, '')
  if (values.STORAGE === 's3') {
    if (!values.S3_BUCKET) problems.push('S3_BUCKET is required when STORAGE=s3')
    if ((values.S3_ACCESS_KEY_ID === undefined) !== (values.S3_SECRET_ACCESS_KEY === undefined)) {
      problems.push('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY go together (leave both unset for the SDK\'s default credentials)')
    }
    if (values.S3_PREFIX !== undefined && !/^([A-Za-z0-9][A-Za-z0-9._-]*\/)+$/.test(values.S3_PREFIX)) {
      problems.push('S3_PREFIX must be folder names ending in a slash, such as shop-a/')
    }
    const storage = s3Storage({
      bucket: values.S3_BUCKET ?? 'unset',
      region: values.S3_REGION,
      endpoint: values.S3_ENDPOINT,
      prefix: values.S3_PREFIX,
      forcePathStyle: values.S3_FORCE_PATH_STYLE,
      publicUrl: values.FILES_PUBLIC_URL && trim(values.FILES_PUBLIC_URL),
      credentials:
        values.S3_ACCESS_KEY_ID && values.S3_SECRET_ACCESS_KEY
          ? { accessKeyId: values.S3_ACCESS_KEY_ID, secretAccessKey: values.S3_SECRET_ACCESS_KEY }
          : undefined,
    })
    return { storage, problems }
  }
  const storage = diskStorage({
    root: values.UPLOADS_DIR ?? join(defaults.dataDir, 'uploads'),
    publicUrl: trim(values.FILES_PUBLIC_URL ?? `${defaults.publicUrl}/files`),
  })
  return { storage, problems }
}
