import { Args, Flags } from '@oclif/core'
import type { ApiKeySummary } from '../../api-keys.js'
import { BaseCommand } from '../../base-command.js'
import { loadConfig } from '../../config.js'
import { formatDetails } from '../../output.js'

export default class ApiKeysRotate extends BaseCommand {
  static override summary = 'Replace an API key with a new one; the old one keeps working for a grace period.'
  static override description =
    'Writes straight to the database (DATABASE_URL, else the embedded one). The new key gets the old one’s name, ' +
    'scopes and rate limit, and is printed this once. The old key expires after --grace (24h by default; 0 ends ' +
    'it now), or sooner if it was to expire sooner, so the systems using it can move to the new key meanwhile. ' +
    'The new key keeps the old one’s lifetime (the time from its creation to its expiry) unless --expires-in ' +
    'says otherwise. A revoked or expired key cannot be rotated.'
  static override examples = [
    '<%= config.bin %> <%= command.id %> 0190a6f1-7c3a-7000-8000-00000000beef',
    '<%= config.bin %> <%= command.id %> 0190a6f1-7c3a-7000-8000-00000000beef --grace 7d --expires-in 90d --json',
  ]
  static override enableJsonFlag = true
  static override args = {
    id: Args.string({ description: 'The key’s id, as api-keys list shows it.', required: true }),
  }
  static override flags = {
    grace: Flags.string({ summary: 'How long the old key keeps working: 24h, 7d, 30m, or 0 to end it now.', default: '24h' }),
    'expires-in': Flags.string({ summary: 'How long the new key works (90d, 12h, 30m). Default: the old key’s lifetime.' }),
  }

  async run(): Promise<{ old: ApiKeySummary; new: ApiKeySummary & { key: string } }> {
    const { args, flags } = await this.parse(ApiKeysRotate)
    const { DomainError, parseDuration } = await import('@commerce/domain')
    const { migrate, rotateApiKey } = await import('@commerce/db')
    const { apiKeySummary, isApiKeyId, parseLifetime, storeNewKey } = await import('../../api-keys.js')
    const { withDatabase } = await import('../../database.js')
    const grace = parseDuration(flags.grace, 'h')
    if (grace === undefined) throw new DomainError('validation_error', `--grace takes a duration, e.g. 24h, 7d or 0 ('${flags.grace}' is not one)`)
    const lifetime = flags['expires-in'] === undefined ? undefined : parseLifetime(flags['expires-in'], 'expires-in')
    if (!isApiKeyId(args.id)) throw new DomainError('not_found', `No API key with id '${args.id}'`)

    const now = Date.now()
    // --expires-in from now, else the old key's lifetime from now, else never.
    const expiryOf = (old: { createdAt: Date; expiresAt: Date | null }) =>
      lifetime !== undefined ? new Date(now + lifetime) : old.expiresAt && new Date(now + old.expiresAt.getTime() - old.createdAt.getTime())
    const { key, row: rotated } = await withDatabase(await loadConfig(), async ({ url, db }) => {
      await migrate(url)
      return storeNewKey(async (stored) => {
        const rotated = await rotateApiKey(db, args.id, stored, new Date(now + grace), expiryOf)
        if (!rotated) throw new DomainError('not_found', `No API key with id '${args.id}'`)
        if (!rotated.usable) {
          throw new DomainError('conflict', `API key '${args.id}' is ${rotated.old.revokedAt ? 'revoked' : 'expired'}: create a new one instead`)
        }
        return rotated.created && { old: rotated.old, created: rotated.created }
      })
    })
    const result = { old: apiKeySummary(rotated.old), new: { ...apiKeySummary(rotated.created), key } }

    this.log(`Rotated API key "${result.new.name}". Copy the new key now: it is not stored and cannot be shown again.`)
    this.log('')
    this.log(key)
    this.log('')
    this.log(
      formatDetails([
        ['new id', result.new.id],
        ['new prefix', result.new.prefix],
        ['new expires at', result.new.expires_at ?? 'never'],
        ['old id', result.old.id],
        ['old prefix', result.old.prefix],
        ['old expires at', result.old.expires_at ?? 'never'],
      ]),
    )
    return result
  }
}
