/**
 * Where emails go: an SMTP server through nodemailer's connection pool (SMTP_URL), or, without
 * one outside production, `.eml` files in the data directory's `mail/` folder, so that
 * `pnpm start` sends nothing anywhere and a developer opens the mails with any mail client.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createTransport } from 'nodemailer'
import addressparser from 'nodemailer/lib/addressparser'
import type { MailOutcome } from '@commerce/db'

/** Kept of the server's reply in the attempt log. */
const RESPONSE_LOG_CHARS = 1024

export interface OutgoingMail {
  to: string
  subject: string
  html: string
  text: string
  /** The Message-ID header: the same on every attempt, so a copy sent twice is recognisable. */
  messageId: string
}

export interface Mailer {
  /** Hands the email to the server (or writes its file); never throws: a failure is an outcome too. */
  send(mail: OutgoingMail): Promise<MailOutcome>
  /** Where mails go, for the start-up line: `smtp`, or the folder of the files. */
  readonly destination: string
  close(): void
}

export interface MailerSettings {
  /** smtp:// or smtps://, with credentials; unset: files in `mailDir`. */
  smtpUrl: string | undefined
  /** The From header (MAIL_FROM). */
  from: string
  mailDir: string
  /** Each step of an SMTP exchange (connect, greeting, every reply) within this. */
  timeoutMs: number
  /** SMTP connections at most: the jobs that may send at once. */
  maxConnections: number
}

/** The domain of an address (`Shop <shop@example.com>` → example.com), for Message-IDs; undefined when it has none. */
export function domainOf(address: string): string | undefined {
  const [first] = addressparser(address, { flatten: true })
  const at = first?.address?.lastIndexOf('@') ?? -1
  return at > 0 ? first!.address.slice(at + 1) : undefined
}

interface SmtpError {
  code?: string
  responseCode?: number
  response?: string
  message?: string
}

export function createMailer(settings: MailerSettings): Mailer {
  const started = () => {
    const at = performance.now()
    return () => Math.round(performance.now() - at)
  }
  if (settings.smtpUrl === undefined) {
    const files = createTransport({ streamTransport: true, buffer: true, newline: 'unix' })
    let folder: Promise<unknown> | undefined
    return {
      destination: settings.mailDir,
      async send(mail) {
        const elapsed = started()
        try {
          const info = await files.sendMail({ from: settings.from, ...mail })
          await (folder ??= mkdir(settings.mailDir, { recursive: true }))
          // Named so that a listing sorts by time; the Message-ID's local part is the notification's id.
          const path = join(settings.mailDir, `${new Date().toISOString().replaceAll(':', '-')}-${mail.messageId.slice(1).split('@')[0]}.eml`)
          await writeFile(path, info.message)
          return { succeeded: true, responseCode: null, durationMs: elapsed(), error: null, response: path }
        } catch (error) {
          return { succeeded: false, responseCode: null, durationMs: elapsed(), error: error instanceof Error ? error.message : String(error), response: null }
        }
      },
      close() {
        files.close()
      },
    }
  }
  const smtp = createTransport({
    pool: true,
    url: settings.smtpUrl,
    maxConnections: settings.maxConnections,
    connectionTimeout: settings.timeoutMs,
    greetingTimeout: settings.timeoutMs,
    socketTimeout: settings.timeoutMs,
  })
  return {
    destination: 'smtp',
    async send(mail) {
      const elapsed = started()
      try {
        const info = await smtp.sendMail({ from: settings.from, ...mail })
        const response = String(info.response ?? '')
        return { succeeded: true, responseCode: Number(/^\d{3}/.exec(response)?.[0] ?? 250), durationMs: elapsed(), error: null, response: response.slice(0, RESPONSE_LOG_CHARS) }
      } catch (caught) {
        const error = caught as SmtpError
        const message = error.message ?? String(caught)
        return {
          succeeded: false,
          responseCode: error.responseCode ?? null,
          durationMs: elapsed(),
          error: error.code ? `${error.code}: ${message}` : message,
          response: error.response?.slice(0, RESPONSE_LOG_CHARS) ?? null,
        }
      }
    },
    close() {
      smtp.close()
    },
  }
}
