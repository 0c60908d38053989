export { createDb, sqlOf, type Database, type DatabaseConfig, type DatabaseHandle, type Executor } from './client.js'
export { announceWhenCommitted, sendCommit, type SqlClient } from './transaction.js'
export {
  EMBEDDED_DEFAULT_PORT,
  EmbeddedPostgresMissingError,
  defaultDataDir,
  openDatabase,
  redactUrl,
  type OpenDatabaseOptions,
  type OpenedDatabase,
} from './embedded.js'
export { MIGRATIONS_FOLDER, migrate } from './migrate.js'
export { eventRows, eventsCte, writeEvent, writeEvents, type NewEvent } from './outbox.js'
export { EVENTS_CHANNEL } from './announce.js'
export { TASKS, addDeliveryJob, deliveryJobSpec, type DeliveryJob } from './queue.js'
export { newId } from './schema/columns.js'
export {
  createUser,
  customerSnapshot,
  findAccountState,
  findCustomerByUser,
  findUserByEmail,
  findUserById,
  updateUser,
  userSnapshot,
  type AccountChange,
  type AccountState,
  type NewUser,
} from './accounts.js'
export {
  createApiKey,
  findApiKeyByPrefix,
  listApiKeys,
  revokeApiKey,
  rotateApiKey,
  touchApiKey,
  type ApiKeyRow,
  type NewApiKey,
} from './api-keys.js'
export {
  createOAuthClient,
  findOAuthClientByClientId,
  listOAuthClients,
  revokeOAuthClient,
  touchOAuthClient,
  type NewOAuthClient,
  type OAuthClientRow,
} from './oauth-clients.js'
export * from './schema/index.js'
export { isForeignKeyViolation, isUniqueViolation, pgErrorCode } from './errors.js'
export { CLAIM_COLUMNS, WORK_RUNS, claimCte, storeCte, type Claim } from './sql/idempotency-keys.js'
export {
  notePaymentProgress,
  placeReservedOrder,
  placementRow,
  reacquireReservation,
  recordReturnedPayment,
  releaseReservation,
  settlementOf,
  type Placement,
  type Release,
  type SettledPayment,
  type Settlement,
  type StoredAnswer,
} from './sql/checkout-settlement.js'
export { expiredReservations, stuckPayments, type SweepQuery, type SweptPayment } from './sql/payment-sweeps.js'
