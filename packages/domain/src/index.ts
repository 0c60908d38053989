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
export { sign, verify } from './signature.js'
export { DEFAULT_SCRYPT_COST, hashPassword, verifyPassword } from './passwords.js'
export {
  DEFAULT_PER_PAGE,
  EVENT_KINDS,
  MAX_PER_PAGE,
  ROLES,
  WEIGHT_UNITS,
  type EventKind,
} from './constants.js'
export {
  Amount,
  Currency,
  ErrorBody,
  IdParams,
  ListMeta,
  Nullable,
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
export { hasScope } from './scopes.js'
export { SLUG_MAX_LENGTH, slugify } from './slug.js'
export { toPrefixTsQuery } from './search.js'
