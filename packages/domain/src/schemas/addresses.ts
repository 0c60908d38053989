import { Type, type Static } from 'typebox'
import { COUNTRY_CODES } from '../countries.js'
import { Nullable } from './common.js'

export const Country = Type.Enum(COUNTRY_CODES, { description: 'ISO 3166-1 alpha-2 country code (upper case)', examples: ['US'] })

const Line = Type.String({ minLength: 1, maxLength: 200 })
const Optional = (maxLength: number) => Type.Optional(Nullable(Type.String({ maxLength })))

/** A postal address as it is sent: `line1`, `city` and `country` are required. */
export const AddressInput = Type.Object(
  {
    first_name: Optional(100),
    last_name: Optional(100),
    company: Optional(200),
    line1: Line,
    line2: Optional(200),
    city: Type.String({ minLength: 1, maxLength: 100 }),
    region: Optional(100),
    postal_code: Optional(20),
    country: Country,
    phone: Optional(40),
  },
  { additionalProperties: false, title: 'AddressInput', description: 'A postal address as it is sent: `line1`, `city` and `country` are required' },
)
export type AddressInput = Static<typeof AddressInput>

/** A postal address as the API shows it (and as carts and orders keep it): every field present. */
export const Address = Type.Object({
  first_name: Nullable(Type.String()),
  last_name: Nullable(Type.String()),
  company: Nullable(Type.String()),
  line1: Type.String(),
  line2: Nullable(Type.String()),
  city: Type.String(),
  region: Nullable(Type.String()),
  postal_code: Nullable(Type.String()),
  country: Type.String(),
  phone: Nullable(Type.String()),
}, { title: 'Address', description: 'A postal address, every field present (null when not given)' })
export type Address = Static<typeof Address>

/** The stored form of an address input: absent optional fields become null. */
export function toAddress(input: AddressInput): Address {
  return {
    first_name: input.first_name ?? null,
    last_name: input.last_name ?? null,
    company: input.company ?? null,
    line1: input.line1,
    line2: input.line2 ?? null,
    city: input.city,
    region: input.region ?? null,
    postal_code: input.postal_code ?? null,
    country: input.country,
    phone: input.phone ?? null,
  }
}
