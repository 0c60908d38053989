import { Errors, Flags } from '@oclif/core'
import { WebSocket } from 'undici'
import { apiUrl } from '../../api-client.js'
import { ApiCommand } from '../../base-command.js'

interface EventMessage {
  type: 'event'
  id: string
  event: string
  timestamp: string
  data: Record<string, unknown>
}

/** The record an event is about, for the one-line view: `order 1042`, `product 0190…`. */
function subjectOf(data: Record<string, unknown>): string {
  const number = data.order_number ?? data.number
  if (number !== undefined) return `#${String(number)}`
  const id = Object.entries(data).find(([key]) => key === 'id' || key.endsWith('_id'))
  return id ? `${id[0]}=${String(id[1])}` : ''
}

export default class EventsTail extends ApiCommand {
  static override summary = 'Stream events live from the WebSocket channel until interrupted.'
  static override description =
    'Connects to /api/v1/ws with the token and prints each event as it happens: one line per event, or with ' +
    '--json one JSON object per line (the channel\'s own message); "Listening on …" goes to standard error once the ' +
    'stream is in place. Admins and keys with events:read see every ' +
    'event; a customer sees product events and its own. Events that happen while no connection is open are not ' +
    'replayed: use `events list` for the log.'
  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    "<%= config.bin %> <%= command.id %> --events 'order.*' --events product.updated",
    '<%= config.bin %> <%= command.id %> --json --count 1',
  ]
  static override flags = {
    events: Flags.string({
      summary: "Only these kinds: an event kind, a group such as 'order.*', or '*'; repeat or separate with commas.",
      multiple: true,
      delimiter: ',',
    }),
    count: Flags.integer({ summary: 'Stop after this many events.', min: 1 }),
    json: Flags.boolean({ summary: 'One JSON object per line.' }),
  }

  async run(): Promise<void> {
    const { flags } = await this.parse(EventsTail)
    const connection = await this.connection(flags)
    const url = apiUrl(connection.baseUrl, '/api/v1/ws')
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:'
    const socket = new WebSocket(url, { headers: connection.token ? { authorization: `Bearer ${connection.token}` } : {} })
    let received = 0
    // With --events, nothing is printed until the server confirms the subscription, and only the
    // kinds it confirmed: until then the channel sends every kind.
    let kinds: Set<string> | undefined
    const listening = (what: string) => this.logToStderr(`Listening on ${url.origin} for ${what}…`)
    await new Promise<void>((resolve, reject) => {
      const stop = () => socket.close(1000)
      process.once('SIGINT', stop)
      process.once('SIGTERM', stop)
      socket.addEventListener('message', (message) => {
        const parsed = JSON.parse(String(message.data)) as { type: string; message?: string; events?: string[] } | EventMessage
        if (parsed.type === 'ready') {
          if (flags.events) socket.send(JSON.stringify({ type: 'subscribe', events: flags.events }))
          else listening('every event')
        } else if (parsed.type === 'subscribed') {
          kinds = new Set((parsed as { events: string[] }).events)
          listening(flags.events!.join(', '))
        } else if (parsed.type === 'error') {
          reject(new Errors.CLIError(parsed.message ?? 'The channel refused a message', { exit: 1 }))
          socket.close(1000)
        } else if (parsed.type === 'event' && (!flags.events || kinds?.has((parsed as EventMessage).event))) {
          const event = parsed as EventMessage
          this.log(flags.json ? JSON.stringify(event) : `${event.timestamp}  ${event.event.padEnd(20)}  ${event.id}  ${subjectOf(event.data)}`.trimEnd())
          if (flags.count !== undefined && ++received >= flags.count) socket.close(1000)
        }
      })
      // The upgrade's 401 shows only as an error event; the close that follows carries no reason.
      socket.addEventListener('error', () =>
        reject(new Errors.CLIError(`Could not open the event stream at ${url.origin}: is the token valid and the API running?`, { exit: 1 })),
      )
      socket.addEventListener('close', (event) => {
        process.off('SIGINT', stop)
        process.off('SIGTERM', stop)
        if (event.code === 1000 || event.code === 1005) resolve()
        else reject(new Errors.CLIError(`The event stream closed: ${event.reason || `code ${event.code}`}`, { exit: 1 }))
      })
    })
  }
}
