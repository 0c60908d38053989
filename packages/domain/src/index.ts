export { DOMAIN_ERROR_CODES, DomainError, type DomainErrorCode, type ErrorDetail } from './errors.js'
export {
  CURRENCY_EXPONENTS,
  MAX_MINOR_UNITS,
  currencyExponent,
  formatMinorUnits,
  isCurrency,
  toMajorUnits,
  toMinorUnits,
} from './money.js'
export { sign, signStandardWebhook, verify } from './signature.js'
export { isPublicAddress } from './addresses.js'
export { DEFAULT_SCRYPT_COST, hashPassword, verifyPassword } from './passwords.js'
export { parseDuration, type DurationUnit } from './duration.js'
export {
  CHARGE_STATUSES,
  CHECKOUT_STATUSES,
  COUPON_TYPES,
  DEFAULT_PER_PAGE,
  DELIVERY_STATUSES,
  EVENT_KINDS,
  MAX_CART_COUPONS,
  MAX_CART_LINES,
  MAX_LINE_QUANTITY,
  MAX_PER_PAGE,
  FULFILLMENT_STATUSES,
  ORDER_STATUSES,
  PAYMENT_STATUSES,
  ROLES,
  WEIGHT_UNITS,
  type ChargeStatus,
  type CheckoutStatus,
  type CouponType,
  type DeliveryStatus,
  type EventKind,
  type FulfillmentStatus,
  type OrderStatus,
  type PaymentStatus,
  type WeightUnitCode,
} from './constants.js'
export {
  Amount,
  Currency,
  CursorMeta,
  CursorQuery,
  ErrorBody,
  IdParams,
  ListMeta,
  Nullable,
  PageOrCursorMeta,
  PaginationQuery,
  Timestamp,
  Uuid,
} from './schemas/common.js'
export {
  Category,
  CategoryList,
  CategoryRef,
  CreateCategory,
  CreateImage,
  CreateProduct,
  CreateVariant,
  Image,
  ImageList,
  ImageParams,
  ListCategoriesQuery,
  ListProductsQuery,
  Product,
  ProductList,
  ProductListItem,
  UpdateCategory,
  UpdateProduct,
  UpdateVariant,
  Variant,
  VariantList,
  VariantParams,
  WeightUnit,
} from './schemas/catalog.js'
export { AuthResponse, Customer, LoginBody, Me, RegisterBody, Role, User } from './schemas/auth.js'
export { SCOPE_ACTIONS, SCOPE_RESOURCES, hasScope, isScope } from './scopes.js'
export {
  apiKeyLookupPrefix,
  apiKeyMatchesHash,
  crc32,
  generateApiKey,
  hashApiKey,
  isWellFormedApiKey,
  randomBase62,
} from './api-keys.js'
export {
  clientSecretMatchesHash,
  generateClientId,
  generateClientSecret,
  hashClientSecret,
  isClientId,
} from './oauth-clients.js'
export { SLUG_MAX_LENGTH, slugify } from './slug.js'
export { toPrefixTsQuery } from './search.js'
export { COUNTRY_CODES } from './countries.js'
export { Address, AddressInput, Country, toAddress } from './schemas/addresses.js'
export {
  AddCartItem,
  ApplyCoupon,
  Cart,
  CartCoupon,
  CartCouponParams,
  CartItem,
  CartItemParams,
  CreateCart,
  SetCartEmail,
  ShippingRatesQuery,
  Totals,
  UpdateCartItem,
} from './schemas/carts.js'
export {
  AddressList,
  AddressParams,
  CreateAddress,
  CreateCustomer,
  CustomerAddress,
  CustomerList,
  ListCustomersQuery,
  OwnAddressParams,
  UpdateAddress,
  UpdateCustomer,
} from './schemas/customers.js'
export {
  Coupon,
  CouponCode,
  CouponList,
  CreateCoupon,
  CreateShippingMethod,
  CreateTaxRate,
  ListCouponsQuery,
  ListShippingMethodsQuery,
  ListTaxRatesQuery,
  ShippingMethod,
  ShippingMethodList,
  ShippingRate,
  ShippingRateList,
  TaxRate,
  TaxRateList,
  UpdateCoupon,
  UpdateShippingMethod,
  UpdateTaxRate,
} from './schemas/pricing.js'
export { allocateByLargestRemainder, divideRounded } from './rounding.js'
export { percentToPpm, ppmToPercent } from './percent.js'
export { MASS_PER_KG, massOf, massOfKilograms } from './weight.js'
export {
  couponRejection,
  couponRejectionMessage,
  normalizeCouponCode,
  type CouponRejection,
  type CouponRule,
} from './coupons.js'
export { selectTaxRate, TAX_ROUNDINGS, type TaxRateRule, type TaxRounding } from './tax.js'
export { shippingRate, type ShippingMethodRule } from './shipping.js'
export {
  computeCartTotals,
  type CartTotals,
  type CouponDiscount,
  type LineTotals,
  type TotalsInput,
  type TotalsLine,
} from './totals.js'
export { ORDER_MOVES, allowedMoves, amountOwed, fulfillmentStatusOf, moveOrder, paymentStatusOf } from './order-state.js'
export {
  Checkout,
  CompleteCheckout,
  CreateCheckout,
  CreateFulfillment,
  CreateOrder,
  CreatePayment,
  CreateRefund,
  CreateTrackingEvent,
  Fulfillment,
  FulfillmentItem,
  FulfillmentList,
  ListOrdersQuery,
  Order,
  OrderItem,
  OrderList,
  Payment,
  PaymentInput,
  PaymentList,
  Refund,
  SelectShipping,
  Tracking,
  TrackingEvent,
  TrackingParams,
  UpdateOrder,
} from './schemas/orders.js'
export {
  CreateWebhook,
  EVENT_FILTERS,
  Event,
  EventList,
  ListEventsQuery,
  ListWebhookDeliveriesQuery,
  UpdateWebhook,
  UpdatedWebhook,
  WEBHOOK_URL_MAX_LENGTH,
  Webhook,
  WebhookAttempt,
  WebhookDelivery,
  WebhookDeliveryList,
  WebhookDeliveryParams,
  WebhookList,
  WebhookWithSecret,
} from './schemas/webhooks.js'
