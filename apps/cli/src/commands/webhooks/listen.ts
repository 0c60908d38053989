import { randomBytes } from 'node:crypto'
import { Errors, Flags } from '@oclif/core'
import { callApi } from '../../api-client.js'
import { ApiCommand } from '../../base-command.js'
import { EventStream, type StreamedEvent } from '../../event-stream.js'

/** What became of one forwarded event. */
interface Forwarded {
  time: string
  event: string
  id: string
  /** The local server's status code; null when it did not answer. */
  status_code: number | null
  error: string | null
}

/** A secret of the form the API generates: `whsec_` + base64 of 32 random bytes. */
const sessionSecret = () => `whsec_${randomBytes(32).toString('base64')}`

/** A failed request in a few words: `connect ECONNREFUSED 127.0.0.1:4000`, `timed out after 10 s`. */
function describeFailure(error: unknown, timeoutSeconds: number): string {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause.name === 'TimeoutError') return `timed out after ${timeoutSeconds} s`
  }
  if (!(error instanceof Error)) return String(error)
  const cause = error.cause instanceof Error ? error.cause : undefined
  const code = (error as { code?: string }).code ?? (cause as { code?: string } | undefined)?.code
  const message = error.message || cause?.message || error.name
  return code && !message.includes(code) ? `${code}: ${message}` : message
}

export default class WebhooksListen extends ApiCommand {
  static override summary = 'Forward live events to a local server, signed exactly as webhook deliveries are.'
  static override description =
    'For developing a webhook receiver: streams events from the WebSocket (/api/v1/ws, like `events tail`) and POSTs ' +
    'each one to --forward-to with the body and headers a delivery of the worker carries — the {id, event, timestamp, ' +
    'data} envelope, X-Webhook-Id, X-Webhook-Event, X-Webhook-Signature and the Standard Webhooks webhook-id, ' +
    'webhook-timestamp and webhook-signature — signed with --secret (your subscription\'s secret: the API shows it only ' +
    'when it is made or rotated). Without --secret a new secret is made for the session and printed once at the ' +
    'start, for your server to verify with. --webhook forwards the kinds that subscription receives; --events names ' +
    'them; by default every event the token may see is forwarded.\n\n' +
    'One line per forwarded event on standard output: time, kind, event id and the status code your server answered, ' +
    'or why it did not (a server that is down or restarting is reported and listening goes on). Nothing is retried. ' +
    'Messages about the stream go to standard error. A dropped stream is opened again, after 1 s and then up to 30 s ' +
    'between tries, and resumes after the last event it had: events committed meanwhile are forwarded first (up to the ' +
    "channel's replay limit; beyond it, `events list --from` finds them). Ctrl-C stops it. " +
    'Any http:// or https:// URL may be the target, localhost included: the request goes from this machine, not from ' +
    'the service.'
  static override examples = [
    '<%= config.bin %> <%= command.id %> --forward-to http://localhost:4000/hook',
    '<%= config.bin %> <%= command.id %> --forward-to http://localhost:4000/hook --webhook 0190a6f1-7c3a-7000-8000-00000000beef --secret whsec_…',
    "COMMERCE_WEBHOOK_SECRET=whsec_… <%= config.bin %> <%= command.id %> --forward-to http://localhost:4000/hook --events 'order.*,product.created'",
  ]
  static override flags = {
    'forward-to': Flags.string({ summary: 'The URL each event is POSTed to: http:// or https://, localhost is fine.', required: true }),
    secret: Flags.string({
      summary: 'The secret to sign with, your subscription’s (whsec_…). Default: a new one for this session, printed at the start.',
      env: 'COMMERCE_WEBHOOK_SECRET',
    }),
    webhook: Flags.string({
      summary: 'Forward the kinds this subscription receives (its id, as webhooks list shows it).',
      exclusive: ['events'],
    }),
    events: Flags.string({
      summary: "Forward only these kinds: an event kind, a group such as 'order.*', or '*'; repeat or separate with commas.",
      multiple: true,
      delimiter: ',',
      exclusive: ['webhook'],
    }),
    timeout: Flags.integer({ summary: 'Seconds to wait for your server’s answer.', default: 10, min: 1 }),
    json: Flags.boolean({ summary: 'One JSON object per forwarded event: time, event, id, status_code, error.' }),
  }

  async run(): Promise<void> {
    const { flags } = await this.parse(WebhooksListen)
    const target = URL.parse(flags['forward-to'])
    // `localhost:4000/hook` parses, with the scheme `localhost:`.
    if (target?.protocol !== 'http:' && target?.protocol !== 'https:') {
      throw new Errors.CLIError(`--forward-to must be an http:// or https:// URL, such as http://localhost:4000/hook (got '${flags['forward-to']}')`, {
        exit: 2,
      })
    }

    const connection = await this.connection(flags)
    let events = flags.events
    let forwarding = events ? events.join(', ') : 'every event'
    if (flags.webhook !== undefined) {
      const webhook = (await callApi(connection, { method: 'GET', path: `/api/v1/webhooks/${encodeURIComponent(flags.webhook)}` })).body as {
        events: string[]
        is_active: boolean
      }
      events = webhook.events
      forwarding = `the events of webhook ${flags.webhook} (${events.join(', ')})`
      if (!webhook.is_active) this.logToStderr(`Webhook ${flags.webhook} is inactive: the service delivers nothing to it, but its events are forwarded here.`)
    }
    const secret = flags.secret || sessionSecret()
    if (!flags.secret) {
      const theirs = flags.webhook === undefined ? 'your subscription’s' : `webhook ${flags.webhook}’s own secret (the API never shows it again)`
      this.logToStderr(`Your webhook signing secret for this session is ${secret} (verify with it; pass --secret to sign with ${theirs}).`)
    }
    // Loaded here rather than at the top: index.ts imports every command to run any one.
    // undici is CommonJS: its exports come as the default export, bundled or not.
    const [{ signedDelivery }, { default: { request } }] = await Promise.all([import('@commerce/domain'), import('undici')])

    const stopping = new AbortController()
    const timeoutMs = flags.timeout * 1000
    const forward = async (event: StreamedEvent): Promise<Forwarded> => {
      const time = new Date().toISOString()
      const { body, headers } = signedDelivery(
        {
          id: event.id,
          kind: event.event,
          createdAt: new Date(event.timestamp),
          resourceId: event.resource_id,
          sequence: event.sequence,
          data: event.data,
        },
        [secret],
        Math.floor(Date.now() / 1000),
      )
      const outcome = { time, event: event.event, id: event.id }
      try {
        const response = await request(target, {
          method: 'POST',
          body,
          headers,
          signal: AbortSignal.any([stopping.signal, AbortSignal.timeout(timeoutMs)]),
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        })
        await response.body.dump()
        return { ...outcome, status_code: response.statusCode, error: null }
      } catch (error) {
        return { ...outcome, status_code: null, error: describeFailure(error, flags.timeout) }
      }
    }
    const report = (forwarded: Forwarded) => {
      if (stopping.signal.aborted) return
      if (flags.json) return this.log(JSON.stringify(forwarded))
      const outcome = forwarded.status_code === null ? `[error] ${forwarded.error}` : `[${forwarded.status_code}]`
      this.log(`${forwarded.time}  ${forwarded.event.padEnd(20)}  ${forwarded.id}  ${outcome}`)
    }

    // One at a time, in the order the events came: a receiver sees them as they committed.
    let queue: Promise<void> = Promise.resolve()
    const stream: EventStream = new EventStream(connection, {
      events,
      reconnect: true,
      onListening: ({ reconnected }) => {
        if (!reconnected) {
          this.logToStderr(`Ready: forwarding ${forwarding} from ${stream.url.origin} to ${target.href} (Ctrl-C to stop).`)
        } else {
          this.logToStderr(`Reconnected to ${stream.url.origin}; resuming after the last event received.`)
        }
      },
      onResumed: (resume) => {
        if ('count' in resume) this.logToStderr(`Resumed: ${resume.count} events missed while disconnected, forwarded first.`)
        else this.logToStderr(`Could not resume after ${resume.after}: ${resume.refused}. Forwarding live events; commerce events list finds the missed ones.`)
      },
      onEvent: (event) => {
        queue = queue.then(() => forward(event)).then(report)
      },
      onDrop: ({ reason, delayMs }) => {
        this.logToStderr(`${reason}; reconnecting in ${delayMs / 1000} s…`)
      },
    })
    try {
      await stream.run()
    } finally {
      stopping.abort()
      await queue
    }
  }
}
