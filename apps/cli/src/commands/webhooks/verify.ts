import { Errors, Flags } from '@oclif/core'
import { BaseCommand } from '../../base-command.js'

/** Standard input, byte for byte: a signature covers the exact bytes, a trailing newline included. */
async function readBody(): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

/** The body without one trailing newline (LF or CRLF), when it ends with one: what `echo` adds. */
function withoutTrailingNewline(body: Buffer): Buffer | undefined {
  if (body.at(-1) !== 0x0a) return undefined
  return body.subarray(0, body.at(-2) === 0x0d ? -2 : -1)
}

export default class WebhooksVerify extends BaseCommand {
  static override summary = 'Check the signature of a webhook body read from standard input.'
  static override description =
    'Checks either or both schemes a delivery carries, with the subscription’s secret. X-Webhook-Signature: --signature, ' +
    'the lowercase hex HMAC-SHA256 of the body. Standard Webhooks: --id, --timestamp and --standard-signature, the ' +
    'webhook-id, webhook-timestamp and webhook-signature headers; the signature header may hold several space-separated ' +
    '"v1,<base64>" signatures (during a secret’s rotation it holds one per secret) and one matching is enough; the ' +
    'timestamp must be within --tolerance seconds of now (300, as in the Standard Webhooks libraries; 0 skips the check).\n\n' +
    'The body is read from standard input as exact bytes: nothing is trimmed, so give it from a file (< body.json) or ' +
    "with printf '%s' — `echo` adds a newline, which changes the signature. Prints `valid: …` naming what matched and " +
    'exits 0; otherwise says why on standard error and exits 1.'
  static override examples = [
    "printf '%s' \"$BODY\" | <%= config.bin %> <%= command.id %> --secret whsec_… --signature 5f0c…e1",
    '<%= config.bin %> <%= command.id %> --secret whsec_… --id 0190a6f1-… --timestamp 1795000000 --standard-signature "v1,K5o… v1,q1w…" < body.json',
    'COMMERCE_WEBHOOK_SECRET=whsec_… <%= config.bin %> <%= command.id %> --id 0190a6f1-… --timestamp 1795000000 --standard-signature "v1,K5o…" --tolerance 0 < old-delivery.json',
  ]
  static override flags = {
    secret: Flags.string({ summary: 'The subscription’s secret (whsec_… or the one you gave it).', env: 'COMMERCE_WEBHOOK_SECRET', required: true }),
    signature: Flags.string({ summary: 'The X-Webhook-Signature header: hex HMAC-SHA256 of the body.', helpGroup: 'X-WEBHOOK-SIGNATURE' }),
    id: Flags.string({ summary: 'The webhook-id header.', dependsOn: ['timestamp', 'standard-signature'], helpGroup: 'STANDARD WEBHOOKS' }),
    timestamp: Flags.string({
      summary: 'The webhook-timestamp header (seconds since the epoch).',
      dependsOn: ['id', 'standard-signature'],
      helpGroup: 'STANDARD WEBHOOKS',
    }),
    'standard-signature': Flags.string({
      summary: 'The webhook-signature header: one or more space-separated "v1,<base64>" signatures.',
      dependsOn: ['id', 'timestamp'],
      helpGroup: 'STANDARD WEBHOOKS',
    }),
    tolerance: Flags.integer({
      summary: 'Seconds webhook-timestamp may be from now, either way; 0 skips the check.',
      default: 300,
      min: 0,
      helpGroup: 'STANDARD WEBHOOKS',
    }),
  }

  async run(): Promise<void> {
    const { flags } = await this.parse(WebhooksVerify)
    const standard = flags.id !== undefined ? { id: flags.id, timestamp: flags.timestamp!, header: flags['standard-signature']! } : undefined
    if (flags.signature === undefined && !standard) {
      throw new Errors.CLIError('Give --signature (X-Webhook-Signature), or --id, --timestamp and --standard-signature (Standard Webhooks), or both', {
        exit: 2,
      })
    }
    if (process.stdin.isTTY) {
      throw new Errors.CLIError("Give the body on standard input, exactly as received: < body.json, or printf '%s' \"$BODY\" |", { exit: 2 })
    }
    const body = await readBody()
    // Loaded here rather than at the top: index.ts imports every command to run any one.
    const { verify, verifyStandardWebhook } = await import('@commerce/domain')
    const tolerance = flags.tolerance === 0 ? Infinity : flags.tolerance
    const checkStandard = (bytes: Buffer) => verifyStandardWebhook(standard!.id, standard!.timestamp, bytes, flags.secret, standard!.header, { toleranceSeconds: tolerance })
    /** Whether the body would have matched without its trailing newline. */
    const newlineHint = (matches: (bytes: Buffer) => boolean) => {
      const trimmed = withoutTrailingNewline(body)
      return trimmed && matches(trimmed)
        ? " It would match without the newline the body ends with: give the body from a file or with printf '%s', not echo."
        : ''
    }

    const problems: string[] = []
    if (flags.signature !== undefined) {
      if (verify(body, flags.secret, flags.signature)) {
        this.log('valid: X-Webhook-Signature (hex HMAC-SHA256 of the body)')
      } else if (!/^[0-9a-f]{64}$/i.test(flags.signature)) {
        problems.push(`invalid: X-Webhook-Signature must be 64 hex digits (got ${flags.signature.length} characters).`)
      } else {
        problems.push(`invalid: X-Webhook-Signature does not match this body and secret.${newlineHint((bytes) => verify(bytes, flags.secret, flags.signature!))}`)
      }
    }
    if (standard) {
      const verdict = checkStandard(body)
      if (verdict.valid) {
        this.log(`valid: webhook-signature (Standard Webhooks), signature ${verdict.matched + 1} of ${verdict.signatures}`)
      } else if (verdict.reason === 'malformed_timestamp') {
        problems.push(`invalid: webhook-timestamp must be whole seconds since the epoch (got '${standard.timestamp}').`)
      } else if (verdict.reason === 'no_matching_signature') {
        const which =
          verdict.signatures === 0
            ? 'webhook-signature holds no signature'
            : verdict.signatures === 1
              ? 'the signature in webhook-signature does not match this body, id, timestamp and secret'
              : `none of the ${verdict.signatures} signatures in webhook-signature matches this body, id, timestamp and secret`
        problems.push(`invalid: ${which}.${newlineHint((bytes) => checkStandard(bytes).valid)}`)
      } else {
        const when = verdict.reason === 'timestamp_too_old' ? `${verdict.ageSeconds} s old` : `${-verdict.ageSeconds} s in the future`
        problems.push(`invalid: webhook-timestamp is ${when}, beyond the tolerance of ${flags.tolerance} s (--tolerance 0 skips this check).`)
      }
    }
    if (problems.length > 0) {
      for (const problem of problems) this.logToStderr(problem)
      this.exit(1)
    }
  }
}
