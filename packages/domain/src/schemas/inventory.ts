/** Stock locations, inventory levels, adjustments, transfers and the movement log (docs/inventory.md). */
import { Type, type Static } from 'typebox'
import { ADJUSTMENT_REASONS, MAX_LINE_QUANTITY, MOVEMENT_REASONS } from '../constants.js'
import { Address, AddressInput } from './addresses.js'
import { CursorMeta, Nullable, PageOrCursorMeta, PaginationQuery, Timestamp, Uuid } from './common.js'

const Quantity = Type.Integer({ minimum: 0, maximum: 1_000_000_000 })
const Note = Type.String({ minLength: 1, maxLength: 500, description: 'Kept with the movements: a purchase order, why the count differed' })
/** A UUID field saying what it names. */
const IdOf = (description: string) => Type.String({ format: 'uuid', maxLength: 36, description })

export const StockLocation = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    address: Nullable(Address),
    priority: Type.Integer({ description: 'Allocation tries locations by priority, lowest first (ties by id)' }),
    is_active: Type.Boolean({ description: 'An inactive location sells nothing: its available units leave `inventory_quantity`; what is committed there can still be shipped' }),
    is_default: Type.Boolean({ description: 'New products and variants start here, and `inventory_quantity` written through the product API is adjusted here' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'StockLocation', description: 'A place that holds stock: a warehouse, a store' },
)
export type StockLocation = Static<typeof StockLocation>

export const CreateStockLocation = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, description: 'Unique, compared case-insensitively' }),
    address: Type.Optional(Nullable(AddressInput)),
    priority: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
    is_active: Type.Optional(Type.Boolean()),
    is_default: Type.Optional(Type.Boolean({ description: 'true makes this the default location (the previous one stops being it); it cannot be set to false' })),
  },
  { additionalProperties: false, title: 'CreateStockLocationRequest' },
)
export type CreateStockLocation = Static<typeof CreateStockLocation>
export const UpdateStockLocation = Type.Partial(CreateStockLocation, { additionalProperties: false, minProperties: 1, title: 'UpdateStockLocationRequest' })
export type UpdateStockLocation = Static<typeof UpdateStockLocation>

export const StockLocationList = Type.Object(
  { stock_locations: Type.Array(StockLocation), meta: PageOrCursorMeta },
  { title: 'StockLocationList', description: 'A page of stock locations, by priority' },
)
export type StockLocationList = Static<typeof StockLocationList>

export const InventoryLevel = Type.Object(
  {
    id: Uuid,
    location_id: Uuid,
    location_name: Type.String(),
    product_id: Uuid,
    variant_id: Nullable(Uuid),
    on_hand: Type.Integer({ description: 'Units physically there' }),
    reserved: Type.Integer({ description: 'Held by checkouts whose payment is with the provider' }),
    committed: Type.Integer({ description: 'Promised to placed orders, not shipped yet' }),
    safety_stock: Type.Integer({ description: 'Kept back: never sold' }),
    available: Type.Integer({ description: 'on_hand − reserved − committed − safety_stock: what can be sold here (negative when a count found fewer units than were promised)' }),
    low_stock_threshold: Nullable(Type.Integer({ description: '`inventory.low` is sent when available falls below it; null: never' })),
    updated_at: Timestamp,
  },
  { title: 'InventoryLevel', description: 'One item’s stock at one location (the item: a variant, or a product sold without variants)' },
)
export type InventoryLevel = Static<typeof InventoryLevel>

export const ListInventoryLevelsQuery = Type.Object({
  ...PaginationQuery.properties,
  location_id: Type.Optional(IdOf('Only levels at this location')),
  product_id: Type.Optional(IdOf('Only levels of this product (its variants’ too)')),
  variant_id: Type.Optional(IdOf('Only levels of this variant')),
  low_stock: Type.Optional(
    Type.Boolean({ description: 'true: only levels whose available units are below their `low_stock_threshold`; false: only the others' }),
  ),
})
export type ListInventoryLevelsQuery = Static<typeof ListInventoryLevelsQuery>

export const InventoryLevelList = Type.Object(
  { inventory_levels: Type.Array(InventoryLevel), meta: PageOrCursorMeta },
  { title: 'InventoryLevelList', description: 'A page of inventory levels, by product, variant and location priority' },
)
export type InventoryLevelList = Static<typeof InventoryLevelList>

export const UpdateInventoryLevel = Type.Object(
  {
    safety_stock: Type.Optional(Quantity),
    low_stock_threshold: Type.Optional(Nullable(Quantity)),
  },
  { additionalProperties: false, minProperties: 1, title: 'UpdateInventoryLevelRequest' },
)
export type UpdateInventoryLevel = Static<typeof UpdateInventoryLevel>

/** The stock item a request names: a product, and its variant when it has them. */
const ItemFields = {
  product_id: IdOf('The product'),
  variant_id: Type.Optional(Nullable(IdOf('The variant: required when the product has variants, whose units are each variant’s'))),
}

export const CreateInventoryAdjustment = Type.Object(
  {
    ...ItemFields,
    location_id: IdOf('The location whose units are adjusted'),
    quantity: Type.Optional(
      Type.Integer({ minimum: -1_000_000_000, maximum: 1_000_000_000, description: 'Units to add (negative: to remove) on hand. Exactly one of `quantity` and `on_hand`' }),
    ),
    on_hand: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000, description: 'The units counted on hand (a stock count): the level is set to it' })),
    reason: Type.Enum(ADJUSTMENT_REASONS, { description: 'Why: goods received, a correction, a cycle count, damaged, shrinkage (lost or stolen), other' }),
    note: Type.Optional(Nullable(Note)),
  },
  { additionalProperties: false, title: 'CreateInventoryAdjustmentRequest' },
)
export type CreateInventoryAdjustment = Static<typeof CreateInventoryAdjustment>

export const CreateInventoryTransfer = Type.Object(
  {
    ...ItemFields,
    from_location_id: IdOf('Where the units leave'),
    to_location_id: IdOf('Where they arrive (another location)'),
    quantity: Type.Integer({ minimum: 1, maximum: MAX_LINE_QUANTITY * 1000, description: 'Units to move: at most those available at the source' }),
    note: Type.Optional(Nullable(Note)),
  },
  { additionalProperties: false, title: 'CreateInventoryTransferRequest' },
)
export type CreateInventoryTransfer = Static<typeof CreateInventoryTransfer>

export const InventoryMovement = Type.Object(
  {
    id: Type.String({ description: 'Ascending in the order the changes were written' }),
    level_id: Uuid,
    location_id: Uuid,
    product_id: Uuid,
    variant_id: Nullable(Uuid),
    on_hand_delta: Type.Integer(),
    reserved_delta: Type.Integer(),
    committed_delta: Type.Integer(),
    safety_stock_delta: Type.Integer(),
    reason: Type.Enum(MOVEMENT_REASONS),
    note: Nullable(Type.String()),
    order_id: Nullable(IdOf('The order the change belongs to')),
    reference_id: Nullable(
      IdOf('What the change belongs to besides an order: the adjustment or transfer (shared by its movements), the checkout’s payment, the fulfillment, the return'),
    ),
    actor: Nullable(Type.String({ description: 'Who made the change (`user:<id>`, `api_key:<id>`, …); null for a checkout or the worker' })),
    created_at: Timestamp,
  },
  { title: 'InventoryMovement', description: 'One change of a level: the change of each quantity, and why' },
)
export type InventoryMovement = Static<typeof InventoryMovement>

export const ListInventoryMovementsQuery = Type.Object({
  per_page: PaginationQuery.properties.per_page,
  after: PaginationQuery.properties.after,
  location_id: Type.Optional(IdOf('Only movements at this location')),
  product_id: Type.Optional(IdOf('Only movements of this product (its variants’ too)')),
  variant_id: Type.Optional(IdOf('Only movements of this variant')),
  order_id: Type.Optional(IdOf('Only movements of this order (what its checkout, fulfillments and returns did)')),
  reason: Type.Optional(Type.Enum(MOVEMENT_REASONS)),
})
export type ListInventoryMovementsQuery = Static<typeof ListInventoryMovementsQuery>

export const InventoryMovementList = Type.Object(
  { inventory_movements: Type.Array(InventoryMovement), meta: CursorMeta },
  { title: 'InventoryMovementList', description: 'A page of the movement log, newest first' },
)
export type InventoryMovementList = Static<typeof InventoryMovementList>

export const InventoryChange = Type.Object(
  {
    levels: Type.Array(InventoryLevel, { description: 'The levels as they are now: one for an adjustment, the source and the destination for a transfer' }),
    movements: Type.Array(InventoryMovement),
  },
  { title: 'InventoryChange', description: 'What an adjustment or a transfer did' },
)
export type InventoryChange = Static<typeof InventoryChange>
