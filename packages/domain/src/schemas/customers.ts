/** Customers (admin CRUD, the owner's own record) and their saved addresses. */
import { Type, type Static } from 'typebox'
import { Address, AddressInput } from './addresses.js'
import { Customer } from './auth.js'
import { Nullable, PageOrCursorMeta, PaginationQuery, Timestamp, Uuid } from './common.js'

const Email = Type.String({ format: 'email', maxLength: 254 })
const Name = Type.String({ maxLength: 100 })
const Phone = Type.String({ maxLength: 40 })

/** Deleted customers keep their row (orders point at it) under an address of this domain, which can never be anyone's. */
export const ANONYMIZED_EMAIL_DOMAIN = 'anonymized.invalid'

export const CreateCustomer = Type.Object(
  {
    email: Email,
    first_name: Type.Optional(Nullable(Name)),
    last_name: Type.Optional(Nullable(Name)),
    phone: Type.Optional(Nullable(Phone)),
  },
  { additionalProperties: false, title: 'CreateCustomerRequest' },
)
export type CreateCustomer = Static<typeof CreateCustomer>

/** Only the personal fields: `id`, `user_id` and `role` are not the caller's to change. */
export const UpdateCustomer = Type.Partial(CreateCustomer, { additionalProperties: false, minProperties: 1, title: 'UpdateCustomerRequest' })
export type UpdateCustomer = Static<typeof UpdateCustomer>

export const ListCustomersQuery = Type.Object({
  ...PaginationQuery.properties,
  search: Type.Optional(
    Type.String({
      maxLength: 200,
      description: 'Case-insensitive substring of the email, first name or last name (% and _ match themselves)',
    }),
  ),
  email: Type.Optional(Type.String({ maxLength: 254, description: 'Exact email, case-insensitive' })),
})
export type ListCustomersQuery = Static<typeof ListCustomersQuery>

export const CustomerList = Type.Object(
  { customers: Type.Array(Customer), meta: PageOrCursorMeta },
  { title: 'CustomerList', description: 'A page of customers' },
)
export type CustomerList = Static<typeof CustomerList>

const defaultFlags = {
  is_default_shipping: Type.Optional(Type.Boolean({ description: 'Make this the default shipping address' })),
  is_default_billing: Type.Optional(Type.Boolean({ description: 'Make this the default billing address' })),
}

/** A saved address as the API shows it. */
export const CustomerAddress = Type.Object({
  id: Uuid,
  customer_id: Uuid,
  ...Address.properties,
  is_default_shipping: Type.Boolean(),
  is_default_billing: Type.Boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { title: 'CustomerAddress', description: "An address saved in a customer's address book" })
export type CustomerAddress = Static<typeof CustomerAddress>

export const CreateAddress = Type.Object({ ...AddressInput.properties, ...defaultFlags }, { additionalProperties: false, title: 'CreateAddressRequest' })
export type CreateAddress = Static<typeof CreateAddress>

export const UpdateAddress = Type.Partial(CreateAddress, { additionalProperties: false, minProperties: 1, title: 'UpdateAddressRequest' })
export type UpdateAddress = Static<typeof UpdateAddress>

export const AddressList = Type.Object(
  { addresses: Type.Array(CustomerAddress), meta: PageOrCursorMeta },
  { title: 'AddressList', description: "A page of a customer's saved addresses" },
)
export type AddressList = Static<typeof AddressList>

/** `/customers/:id/addresses/:address_id` */
export const AddressParams = Type.Object({ id: Uuid, address_id: Uuid })
/** `/customers/me/addresses/:address_id` */
export const OwnAddressParams = Type.Object({ address_id: Uuid })
