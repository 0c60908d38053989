import { Flags } from '@oclif/core'
import { ApiCommand } from '../../base-command.js'
import { EventStream } from '../../event-stream.js'

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
    let received = 0
    const stream: EventStream = new EventStream(await this.connection(flags), {
      events: flags.events,
      onListening: () => this.logToStderr(`Listening on ${stream.url.origin} for ${flags.events?.join(', ') ?? 'every event'}…`),
      onEvent: (event) => {
        this.log(flags.json ? JSON.stringify(event) : `${event.timestamp}  ${event.event.padEnd(20)}  ${event.id}  ${subjectOf(event.data)}`.trimEnd())
        if (flags.count !== undefined && ++received >= flags.count) stream.close()
      },
    })
    await stream.run()
  }
}
