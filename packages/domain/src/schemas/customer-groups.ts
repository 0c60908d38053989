/** Customer groups (wholesale, VIP) and their members, which price lists and promotions are limited to (docs/pricing.md). */
import { Type, type Static } from 'typebox'
import { Nullable, PageOrCursorMeta, PaginationQuery, Timestamp, Uuid } from './common.js'

/** The most customers one request adds to a group. */
export const MAX_GROUP_CUSTOMERS_PER_REQUEST = 100

export const CustomerGroup = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    description: Nullable(Type.String()),
    customer_count: Type.Integer({ description: 'Customers in the group (deleted customers are not counted)' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'CustomerGroup', description: 'A named group of customers that price lists and promotions can be limited to' },
)
export type CustomerGroup = Static<typeof CustomerGroup>

export const CreateCustomerGroup = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, description: 'Unique, compared case-insensitively', examples: ['Wholesale'] }),
    description: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
  },
  { additionalProperties: false, title: 'CreateCustomerGroupRequest' },
)
export type CreateCustomerGroup = Static<typeof CreateCustomerGroup>
export const UpdateCustomerGroup = Type.Partial(CreateCustomerGroup, { additionalProperties: false, minProperties: 1, title: 'UpdateCustomerGroupRequest' })
export type UpdateCustomerGroup = Static<typeof UpdateCustomerGroup>

export const ListCustomerGroupsQuery = Type.Object({
  ...PaginationQuery.properties,
  q: Type.Optional(Type.String({ maxLength: 200, description: 'Case-insensitive substring of the name (% and _ match themselves)' })),
})
export type ListCustomerGroupsQuery = Static<typeof ListCustomerGroupsQuery>

export const CustomerGroupList = Type.Object(
  { customer_groups: Type.Array(CustomerGroup), meta: PageOrCursorMeta },
  { title: 'CustomerGroupList', description: 'A page of customer groups, by name' },
)
export type CustomerGroupList = Static<typeof CustomerGroupList>

export const AddCustomerGroupCustomers = Type.Object(
  {
    customer_ids: Type.Array(Uuid, {
      minItems: 1,
      maxItems: MAX_GROUP_CUSTOMERS_PER_REQUEST,
      description: 'Customers to add; those already in the group stay (adding is idempotent)',
    }),
  },
  { additionalProperties: false, title: 'AddCustomerGroupCustomersRequest' },
)
export type AddCustomerGroupCustomers = Static<typeof AddCustomerGroupCustomers>

/** `/customer-groups/:id/customers/:customer_id` */
export const CustomerGroupCustomerParams = Type.Object({ id: Uuid, customer_id: Uuid })
