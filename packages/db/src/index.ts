export { createDb, sqlOf, type Database, type DatabaseConfig, type DatabaseHandle, type Executor } from './client.js'
export { announceWhenCommitted, onStockMoved, sendCommit, whenCommitted, type SqlClient, type StockListener } from './transaction.js'
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
export { eventRows, eventsCte, writeEvent, writeEvents, type EventOrigin, type NewEvent } from './outbox.js'
export { EVENTS_CHANNEL } from './announce.js'
export { TASKS, type DeliveryJob, type NotificationJob } from './queue.js'
export { newId } from './schema/columns.js'
export {
  accountEventData,
  changePassword,
  confirmEmailChange,
  createUser,
  customerSnapshot,
  findCustomerByUser,
  findUserByEmail,
  findUserById,
  requestEmailChange,
  resetPassword,
  setOwnPassword,
  updateUser,
  userSnapshot,
  verifyEmail,
  type AccountChange,
  type NewEmailChange,
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
export { isForeignKeyViolation, isUniqueViolation, pgConstraintOf, pgErrorCode } from './errors.js'
export { deliveryView, webhookView } from './webhook-views.js'
export { hasStaffAttributes, listItemJson, productSnapshot, storedDetailJson, toImage, toListItem, toOption, toVariant, type StoredItem, type VariantProduct } from './product-rows.js'

// Hand-written statements, one operation per file (sql/, see docs/internals.md "Where SQL lives").
export type { JsonOf, JsonRow, JsonValue } from './sql/json-rows.js'
export { findAccountState, type AccountState } from './sql/account-state.js'
export { requestAccountLink, type AccountLinkRequest } from './sql/account-links.js'
export { addCartLine, type AddedLine, type LineRefusal, type NewCartLine } from './sql/cart-add-line.js'
export { setCartLineQuantity, type ChangedLine } from './sql/cart-line-quantity.js'
export {
  cartRowOf,
  prepareCartRead,
  pricingRulesSince,
  readCart,
  readLinePrices,
  type AutomaticPromotionRow,
  type CartRow,
  type PromotionCounts,
  type CampaignRow,
  type LinePriceJson,
  type PriceListJson,
  type PromotionRow,
  type LineRow,
  type ShippingMethodRow,
  type TaxRateRow,
} from './sql/cart-read.js'
export {
  isLimitCrossed,
  lockCheckout,
  reserveCheckout,
  type CampaignSpend,
  type CheckoutLevel,
  type InProgress,
  type LockedCheckout,
  type PromotionUse,
  type Reservation,
} from './sql/checkout-reservation.js'
export { applyStockMoves, ensureLevels, lockStockItems, LEVEL_COLUMNS, type LockedLevel, type StockMove } from './sql/stock-moves.js'
export { setLocationActive } from './sql/location-activation.js'
export {
  notePaymentProgress,
  placeAtOnce,
  placeReservedOrder,
  placementRow,
  reacquireReservation,
  recordReturnedPayment,
  releaseReservation,
  settlementOf,
  type Placement,
  type PlacementAtOnce,
  type Release,
  type ReturnedPayment,
  type SettledPayment,
  type Settlement,
} from './sql/checkout-settlement.js'
export { enabledUsers, revokedApiKeys } from './sql/credential-checks.js'
export { addDeliveryJob } from './sql/delivery-jobs.js'
export {
  recordAttempts,
  recordFirstAttempts,
  type AttemptOutcome,
  type DeliveryStep,
  type FirstAttempt,
  type NextAttempt,
  type Recorded,
} from './sql/delivery-records.js'
export { endUnsentDelivery, loadDeliveries, unsentPairs, type LoadedDelivery, type Target } from './sql/delivery-targets.js'
export { disableFailingWebhooks } from './sql/endpoint-health.js'
export { countEventsBetween, eventIdsSince, eventPageBetween, eventsSince, newestEventId, notifiedEvents, type FeedEvent } from './sql/event-feed.js'
export { JOB_STATES, pingDatabase, sampleDatabase, type DatabaseSample } from './sql/health.js'
export {
  EXPIRED_KEYS_BATCH,
  beginWork,
  claimKey,
  deleteExpiredKeys,
  storeAnswer,
  undoWork,
  type Claim,
  type KeyClaim,
  type StoredAnswer,
} from './sql/idempotency-keys.js'
export {
  fulfillmentColumn,
  orderSelection,
  paymentColumn,
  readOrderBalance,
  type FulfillmentJson,
  type ItemJson,
  type OrderBalanceJson,
  type OrderRead,
  type OrderRow,
  type PaymentJson,
  type RefundJson,
} from './sql/order-read.js'
export { expiredReservations, releaseSweepLock, stuckPayments, trySweepLock, type SweepQuery, type SweptPayment } from './sql/payment-sweeps.js'
export {
  prepareLocalizedProductDetail,
  prepareProductDetail,
  prepareStoredProductDetail,
  productColumns,
  readProductDetail,
  readProductDetails,
  type ImageJson,
  type ProductDetailRow,
  type ProductRow,
  type StoredDetailRow,
  type VariantJson,
} from './sql/product-detail.js'
export { categoryTranslationLocale, translatedCategoryField, translatedLocalesSince, translatedVariantTitle } from './sql/translations.js'
export {
  categoryHasChildrenStatement,
  productCountStatement,
  productPageStatement,
  productRowsStatement,
  storedItemsStatement,
  storedPageStatement,
  type ProductListParams,
  type ProductListShape,
} from './sql/product-list.js'
export { claimProviderEvent, paymentIdByReference, type ProviderEvent } from './sql/provider-events.js'
export {
  lockPendingRefund,
  pendingRefunds,
  recordRefundFailed,
  recordRefundMade,
  refundsLeftPending,
  type PendingRefund,
  type RefundFailure,
  type RefundParties,
} from './sql/refunds.js'
export { countReplay, missingEvents, replayDeliveries, type ReplaySelection } from './sql/webhook-replay.js'
export { relayOutboxRows, splitFanOut, unlockStaleJobs } from './sql/worker-jobs.js'
export { storeAccountToken, type NewAccountToken } from './sql/account-tokens.js'
export { addNotificationJob } from './sql/notification-jobs.js'
export {
  createNotifications,
  loadNotifications,
  recordNotificationAttempts,
  type LoadedNotification,
  type MailOutcome,
  type NotificationAttempt,
} from './sql/notification-records.js'
export {
  CSV_HEARTBEAT_STALE_SECONDS,
  EXPIRED_CSV_BATCH,
  deleteExpiredCsvJobs,
  addCsvJob,
  applyValidatedImport,
  beatCsvJob,
  claimExport,
  claimImport,
  completeExport,
  failCsvJob,
  finishImport,
  recordImportBatch,
  type ClaimedImport,
  type CsvTask,
  type ImportReportRow,
} from './sql/csv-jobs.js'
export { publishDueProducts } from './sql/product-publishing.js'
export {
  customerExportRows,
  orderExportRows,
  productExportColumns,
  productExportRows,
  type CustomerExportFilters,
  type CustomerExportRow,
  type OrderExportFilters,
  type OrderExportRow,
  type BasePrice,
  type ProductExportColumns,
  type ProductExportFilters,
  type ProductExportRow,
  type StockLocationColumn,
} from './sql/csv-export.js'
export {
  readAttributeDefinitions,
  readProductMatches,
  writeProducts,
  type AttributeDefinitionColumn,
  type AttributeWrite,
  type PriceWrite,
  type ProductFields,
  type ProductMatches,
  type ProductWrite,
  type VariantFields,
  type VariantWrite,
} from './sql/catalog-import.js'
export { readCustomerMatches, readCustomerSnapshots, writeCustomers, type CustomerMatches, type CustomerWrite } from './sql/customer-import.js'
export { EXPIRED_UPLOADS_BATCH, deleteExpiredUploads } from './sql/upload-expiry.js'
export { RELEASED_RESERVATIONS_BATCH, deleteReleasedReservations } from './sql/released-reservations.js'
export { EXPIRED_EVENTS_BATCH, OLD_DELIVERIES_BATCH, deleteOldDeliveries, eventsSweptPast, sweepExpiredEvents } from './sql/event-retention.js'
export {
  LISTING_SORTS,
  facetLabelsOf,
  listingFacets,
  listingPage,
  refreshingListingOnce,
  type ListingFacets,
  type ListingFilter,
  type ListingKey,
  type ListingPage,
  type ListingSort,
  type ListingWindow,
  type RangeFilter,
  type TermFilter,
} from './sql/product-listing.js'
export { previewCollectionRules, refreshCollection, type StoredCollectionRule } from './sql/collection-membership.js'
export {
  LISTING_CHANGES_RETENTION_S,
  OLD_LISTING_CHANGES_BATCH,
  deleteOldListingChanges,
  readListingChanges,
  readListingIndex,
  readTitleOrder,
  type IndexedListingRow,
  type IndexedMembership,
  type ListingChangesRead,
  type ListingIndexRead,
} from './sql/listing-index.js'
export { BEST_SELLING_DAYS, refreshBestSellers, uuidv7Floor } from './sql/best-sellers.js'
