/**
 * A real SMTP server on 127.0.0.1 for notification tests (smtp-server): records every message it
 * accepts, parsed (mailparser); refuses a recipient with the reply code it is told; can hold the
 * final replies of messages, as a server still writing them to its queue does — a message whose
 * client goes away before its reply is not accepted, as on a real server.
 */
import { simpleParser, type ParsedMail } from 'mailparser'
import { SMTPServer } from 'smtp-server'
import type { AddressInfo } from 'node:net'

export interface ReceivedMail {
  /** RCPT TO of the envelope. */
  to: string
  mail: ParsedMail
  at: number
}

/** The reply code that refuses the n-th (0-based) message to a recipient at RCPT TO, or nothing to accept it. */
export type Refusal = (n: number) => number | undefined

export interface MailServer {
  /** smtp://127.0.0.1:<port>, as SMTP_URL. */
  url: string
  received(to?: string): ReceivedMail[]
  refuse(to: string, refusal: Refusal): void
  /** From now on, messages wait for their final reply until release(). */
  hold(): void
  /** How many messages wait for their final reply. */
  held(): number
  /** Accepts the messages held whose client is still there, and stops holding. */
  release(): void
  close(): Promise<void>
}

export async function startMailServer(): Promise<MailServer> {
  const received: ReceivedMail[] = []
  const refusals = new Map<string, Refusal>()
  const tries = new Map<string, number>()
  const closed = new Set<string>()
  let holding = false
  let waiting: { session: string; accept: () => void }[] = []
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    onRcptTo(address, _session, callback) {
      const to = address.address
      const n = tries.get(to) ?? 0
      tries.set(to, n + 1)
      const code = refusals.get(to)?.(n)
      if (code === undefined) return callback()
      callback(Object.assign(new Error(`mailbox ${to} unavailable`), { responseCode: code }))
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', () => {
        const accept = () => {
          void simpleParser(Buffer.concat(chunks)).then((mail) => {
            received.push({ to: session.envelope.rcptTo[0]!.address, mail, at: Date.now() })
            callback(null, 'queued')
          })
        }
        if (holding) waiting.push({ session: session.id, accept })
        else accept()
      })
    },
    onClose(session) {
      closed.add(session.id)
      waiting = waiting.filter((entry) => entry.session !== session.id)
    },
  })
  // A client killed mid-exchange (the SIGKILL tests) resets its connection, which smtp-server
  // reports as an 'error' event: unheard, it would be an uncaught exception of the test run.
  server.on('error', () => {})
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.server.address() as AddressInfo
  return {
    url: `smtp://127.0.0.1:${port}`,
    received: (to) => (to === undefined ? [...received] : received.filter((entry) => entry.to === to)),
    refuse: (to, refusal) => void refusals.set(to, refusal),
    hold: () => void (holding = true),
    held: () => waiting.length,
    release() {
      holding = false
      for (const entry of waiting.splice(0)) if (!closed.has(entry.session)) entry.accept()
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}
