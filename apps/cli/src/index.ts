/**
 * Every `commerce` command (oclif's explicit discovery): the hand-written ones, and one per API
 * operation built from operations.json, which the build derives from the API's OpenAPI document.
 * oclif imports this whole file to run any one command, so the database commands load
 * @commerce/db and @commerce/domain inside run(): an API call does not pay for them.
 */
import { readFileSync } from 'node:fs'
import type { Command } from '@oclif/core'
import ApiKeysCreate from './commands/api-keys/create.js'
import ApiKeysList from './commands/api-keys/list.js'
import ApiKeysRevoke from './commands/api-keys/revoke.js'
import ApiKeysRotate from './commands/api-keys/rotate.js'
import EventsTail from './commands/events/tail.js'
import Login from './commands/login.js'
import Logout from './commands/logout.js'
import Migrate from './commands/migrate.js'
import OAuthClientsCreate from './commands/oauth-clients/create.js'
import OAuthClientsList from './commands/oauth-clients/list.js'
import OAuthClientsRevoke from './commands/oauth-clients/revoke.js'
import UsersCreate from './commands/users/create.js'
import UsersDisable from './commands/users/disable.js'
import UsersEnable from './commands/users/enable.js'
import UsersUpdate from './commands/users/update.js'
import WebhooksListen from './commands/webhooks/listen.js'
import WebhooksVerify from './commands/webhooks/verify.js'
import { operationCommand } from './operation-command.js'
import type { Operation } from './operations.js'

const operations = JSON.parse(readFileSync(new URL('./operations.json', import.meta.url), 'utf8')) as Operation[]

export const COMMANDS: Record<string, Command.Class> = {
  ...Object.fromEntries(operations.map((operation) => [operation.id, operationCommand(operation)])),
  login: Login,
  logout: Logout,
  'events:tail': EventsTail,
  'webhooks:listen': WebhooksListen,
  'webhooks:verify': WebhooksVerify,
  migrate: Migrate,
  'users:create': UsersCreate,
  'users:update': UsersUpdate,
  'users:disable': UsersDisable,
  'users:enable': UsersEnable,
  'api-keys:create': ApiKeysCreate,
  'api-keys:list': ApiKeysList,
  'api-keys:revoke': ApiKeysRevoke,
  'api-keys:rotate': ApiKeysRotate,
  'oauth-clients:create': OAuthClientsCreate,
  'oauth-clients:list': OAuthClientsList,
  'oauth-clients:revoke': OAuthClientsRevoke,
}
