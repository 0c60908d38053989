export { diskStorage, type DiskStorageOptions } from './disk.js'
export { s3Storage, type S3StorageOptions } from './s3.js'
export { checkKey, FileTooLargeError, type FileStorage } from './types.js'
export { chooseStorage, STORAGE_VARIABLES } from './config.js'
