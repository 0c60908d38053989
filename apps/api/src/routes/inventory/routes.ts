/** Stock locations, inventory levels, adjustments, transfers and the movement log (admin; docs/inventory.md). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  CreateInventoryAdjustment,
  CreateInventoryTransfer,
  CreateStockLocation,
  IdParams,
  InventoryChange,
  InventoryLevel,
  InventoryLevelList,
  InventoryMovementList,
  ListInventoryLevelsQuery,
  ListInventoryMovementsQuery,
  PaginationQuery,
  StockLocation,
  StockLocationList,
  UpdateInventoryLevel,
  UpdateStockLocation,
} from '@commerce/domain'
import { errorResponses } from '../../errors.js'
import { IdempotencyKeyOptional } from '../../idempotency.js'
import { originOf } from '../../origin.js'
import { createStockLocationService } from './locations.js'
import { createInventoryService } from './service.js'

const CHANGE_EVENTS =
  'Writes inventory.adjusted (the levels after and their movements) and inventory.low for a level it takes below its ' +
  '`low_stock_threshold`. An Idempotency-Key is honoured when sent.'

export const inventoryRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const locations = createStockLocationService(app.db)
  const inventory = createInventoryService(app.db)

  app.get(
    '/stock-locations',
    {
      schema: {
        operationId: 'listStockLocations',
        tags: ['stock-locations'],
        summary: 'List stock locations by priority (the order allocation tries them in)',
        querystring: PaginationQuery,
        response: { 200: StockLocationList, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request) => locations.list(request.query),
  )

  app.post(
    '/stock-locations',
    {
      schema: {
        operationId: 'createStockLocation',
        tags: ['stock-locations'],
        summary: 'Create a stock location',
        description:
          'The name is unique, compared case-insensitively (409). `is_default: true` makes it the default location ' +
          '(the previous default stops being it); the default must be active (409). A new location holds nothing: ' +
          'stock arrives by adjustments and transfers.',
        body: CreateStockLocation,
        response: { 201: StockLocation, ...errorResponses(400, 401, 403, 409, 429) },
      },
    },
    async (request, reply) => reply.code(201).send(await locations.create(request.body)),
  )

  app.get(
    '/stock-locations/:id',
    {
      schema: {
        operationId: 'getStockLocation',
        tags: ['stock-locations'],
        summary: 'A stock location',
        params: IdParams,
        response: { 200: StockLocation, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => locations.get(request.params.id),
  )

  app.patch(
    '/stock-locations/:id',
    {
      schema: {
        operationId: 'updateStockLocation',
        tags: ['stock-locations'],
        summary: 'Update a stock location; open or close it for sale',
        description:
          '`is_active: false` takes the units available there out of the items’ `inventory_quantity` (what is ' +
          'reserved or committed there can still be shipped); `is_active: true` puts them back. `is_default: true` ' +
          'moves the default flag here; `is_default: false` on the default is 400, and the default cannot be ' +
          'deactivated (409). A name another location has (case-insensitively) is 409.',
        params: IdParams,
        body: UpdateStockLocation,
        response: { 200: StockLocation, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request) => locations.update(request.params.id, request.body),
  )

  app.delete(
    '/stock-locations/:id',
    {
      schema: {
        operationId: 'deleteStockLocation',
        tags: ['stock-locations'],
        summary: 'Delete a stock location that holds nothing',
        description:
          'Only when none of its levels has units on hand, reserved or committed, and no order was shipped from it ' +
          '(409: deactivate it instead); its empty levels and their movements are deleted with it. The default ' +
          'location cannot be deleted (409).',
        params: IdParams,
        response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      await locations.remove(request.params.id)
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/inventory/levels',
    {
      schema: {
        operationId: 'listInventoryLevels',
        tags: ['inventory'],
        summary: 'List inventory levels: each item’s stock at each location',
        description: 'By product, then variant (the product’s own level first), then location priority.',
        querystring: ListInventoryLevelsQuery,
        response: { 200: InventoryLevelList, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request) => inventory.listLevels(request.query),
  )

  app.patch(
    '/inventory/levels/:id',
    {
      schema: {
        operationId: 'updateInventoryLevel',
        tags: ['inventory'],
        summary: 'Set a level’s safety stock or low-stock threshold',
        description:
          'Safety stock is kept back from sale: a change is a movement (`safety_stock`) and changes the item’s ' +
          '`inventory_quantity`; inventory.low is written when it takes the level below its threshold. The threshold ' +
          '(null: never) is a setting, not a movement.',
        params: IdParams,
        body: UpdateInventoryLevel,
        response: { 200: InventoryLevel, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => inventory.updateLevel(request.params.id, request.body, originOf(request)),
  )

  app.post(
    '/inventory/adjustments',
    {
      schema: {
        operationId: 'createInventoryAdjustment',
        tags: ['inventory'],
        summary: 'Adjust the units on hand of an item at a location',
        description:
          'Exactly one of `quantity` (units to add, negative to remove) and `on_hand` (a count: the level is set to ' +
          'it). A product with variants is adjusted per variant (400 naming `variant_id`); an item never stocked at ' +
          'the location gets a level there. Units on hand cannot go below zero (409). ' +
          CHANGE_EVENTS,
        headers: IdempotencyKeyOptional,
        body: CreateInventoryAdjustment,
        response: { 201: InventoryChange, ...errorResponses(400, 401, 403, 409, 422, 429) },
      },
    },
    async (request, reply) =>
      app.idempotency.run(request, reply, async (tx) => ({ status: 201, body: await inventory.adjust(tx, request.body, originOf(request)) })),
  )

  app.post(
    '/inventory/transfers',
    {
      schema: {
        operationId: 'createInventoryTransfer',
        tags: ['inventory'],
        summary: 'Move units of an item from one location to another',
        description:
          'Only units available at the source (not reserved, committed or kept back) may move (409). The destination ' +
          'gets a level if the item was never stocked there. Both movements (`transfer`) share one `reference_id`. ' +
          CHANGE_EVENTS,
        headers: IdempotencyKeyOptional,
        body: CreateInventoryTransfer,
        response: { 201: InventoryChange, ...errorResponses(400, 401, 403, 409, 422, 429) },
      },
    },
    async (request, reply) =>
      app.idempotency.run(request, reply, async (tx) => ({ status: 201, body: await inventory.transfer(tx, request.body, originOf(request)) })),
  )

  app.get(
    '/inventory/movements',
    {
      schema: {
        operationId: 'listInventoryMovements',
        tags: ['inventory'],
        summary: 'The movement log, newest first',
        description:
          'Every change of a level, with the change of each quantity and why: adjustments, transfers, safety stock, ' +
          'and what checkouts, orders, fulfillments and returns do. Pages by cursor: `after` is the previous page’s ' +
          '`meta.next_cursor` (the last movement id).',
        querystring: ListInventoryMovementsQuery,
        response: { 200: InventoryMovementList, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request) => inventory.listMovements(request.query),
  )
}
