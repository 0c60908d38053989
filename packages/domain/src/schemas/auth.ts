import { Type, type Static } from 'typebox'
import { ROLES } from '../constants.js'
import { Nullable, PageOrCursorMeta, PaginationQuery, Timestamp, Uuid } from './common.js'

export const Role = Type.Enum(ROLES)
export type Role = Static<typeof Role>
const Email = Type.String({ format: 'email', maxLength: 254 })
const Name = Type.String({ maxLength: 100 })
const passwordBounds = { minLength: 8, maxLength: 200, writeOnly: true }
const Password = Type.String(passwordBounds)
/** The token of an emailed link, as the link carries it. */
const LinkToken = Type.String({ minLength: 1, maxLength: 100, writeOnly: true, description: 'The `token` of the emailed link' })

export const User = Type.Object({
  id: Uuid,
  email: Type.String(),
  role: Role,
  disabled_at: Nullable(
    Type.String({
      format: 'date-time',
      description: 'When the account was disabled (it cannot sign in and its tokens are refused); null: enabled',
    }),
  ),
  email_verified_at: Nullable(
    Type.String({
      format: 'date-time',
      description: 'When the account proved it receives mail at `email` (an emailed link it followed); null: not yet',
    }),
  ),
  created_at: Timestamp,
}, { title: 'User', description: 'A user account: how someone signs in, and its role' })
export type User = Static<typeof User>

export const ListUsersQuery = Type.Object({
  ...PaginationQuery.properties,
  role: Type.Optional(Role),
  email: Type.Optional(Type.String({ maxLength: 254, description: 'Exact email, case-insensitive' })),
})
export type ListUsersQuery = Static<typeof ListUsersQuery>

export const UserList = Type.Object({ users: Type.Array(User), meta: PageOrCursorMeta }, { title: 'UserList', description: 'A page of user accounts' })
export type UserList = Static<typeof UserList>

/** What an admin may change of an account: its role, and whether it is disabled. */
export const UpdateUser = Type.Object(
  {
    role: Type.Optional(Role),
    disabled: Type.Optional(Type.Boolean({ description: 'true disables the account, false enables it again' })),
  },
  { additionalProperties: false, minProperties: 1, title: 'UpdateUserRequest' },
)
export type UpdateUser = Static<typeof UpdateUser>

export const Customer = Type.Object({
  id: Uuid,
  user_id: Nullable(Uuid),
  email: Type.String(),
  first_name: Nullable(Type.String()),
  last_name: Nullable(Type.String()),
  phone: Nullable(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { title: 'Customer', description: 'A customer: who buys, with or without a user account' })
export type Customer = Static<typeof Customer>

export const RegisterBody = Type.Object(
  {
    email: Email,
    password: Password,
    first_name: Type.Optional(Name),
    last_name: Type.Optional(Name),
  },
  { additionalProperties: false, title: 'RegisterRequest' },
)
export type RegisterBody = Static<typeof RegisterBody>

export const LoginBody = Type.Object(
  { email: Type.String({ maxLength: 254 }), password: Type.String({ maxLength: 200, writeOnly: true }) },
  { additionalProperties: false, title: 'LoginRequest' },
)
export type LoginBody = Static<typeof LoginBody>

export const AuthResponse = Type.Object({
  user: User,
  customer: Nullable(Customer),
  token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer({ description: 'seconds' }),
}, { title: 'AuthResponse', description: 'A signed-in session: the user, its customer record and a bearer token' })
export type AuthResponse = Static<typeof AuthResponse>

export const Me = Type.Object(
  { user: User, customer: Nullable(Customer) },
  { title: 'Me', description: 'The signed-in user and its customer record (null when the account has none)' },
)
export type Me = Static<typeof Me>

export const PasswordResetRequest = Type.Object({ email: Email }, { additionalProperties: false, title: 'PasswordResetRequest' })
export type PasswordResetRequest = Static<typeof PasswordResetRequest>

export const PasswordResetConfirm = Type.Object(
  { token: LinkToken, password: Password },
  { additionalProperties: false, title: 'PasswordResetConfirmRequest' },
)
export type PasswordResetConfirm = Static<typeof PasswordResetConfirm>

/** The answer to a request that emails a link: the same whether or not the account exists. */
export const AccountRequestAccepted = Type.Object(
  { message: Type.String() },
  { title: 'AccountRequestAccepted', description: 'The request is taken and its email is on its way; `message` says to whom. Asked by address (a password reset, a new verification link), the answer is the same whether or not an account has it' },
)
export type AccountRequestAccepted = Static<typeof AccountRequestAccepted>

/** The answer to a sign-up while REQUIRE_EMAIL_VERIFICATION is on: an account, but no session yet. */
export const RegistrationPending = Type.Object(
  { user: User, customer: Nullable(Customer), message: Type.String() },
  {
    title: 'RegistrationPending',
    description: 'The account is made, but it can be signed in to only once its email address is verified (the emailed link); no token until then',
  },
)
export type RegistrationPending = Static<typeof RegistrationPending>

/** The token of an emailed link, alone (verification, email change). */
export const AccountLinkConfirm = Type.Object({ token: LinkToken }, { additionalProperties: false, title: 'AccountLinkConfirmRequest' })
export type AccountLinkConfirm = Static<typeof AccountLinkConfirm>

export const EmailVerificationResend = Type.Object({ email: Email }, { additionalProperties: false, title: 'EmailVerificationResendRequest' })
export type EmailVerificationResend = Static<typeof EmailVerificationResend>

export const EmailChangeRequest = Type.Object(
  {
    email: Type.String({ format: 'email', maxLength: 254, description: 'The new address: the confirmation link is emailed to it' }),
    password: Type.String({ maxLength: 200, writeOnly: true, description: 'The account’s current password' }),
  },
  { additionalProperties: false, title: 'EmailChangeRequest' },
)
export type EmailChangeRequest = Static<typeof EmailChangeRequest>

export const PasswordChange = Type.Object(
  {
    current_password: Type.String({ maxLength: 200, writeOnly: true, description: 'The account’s password now' }),
    new_password: Type.String({ ...passwordBounds, description: 'The new password, 8 to 200 characters' }),
  },
  { additionalProperties: false, title: 'PasswordChangeRequest' },
)
export type PasswordChange = Static<typeof PasswordChange>
