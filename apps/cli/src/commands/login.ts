import { createInterface } from 'node:readline'
import { Errors, Flags } from '@oclif/core'
import { ApiRequestError, callApi } from '../api-client.js'
import { ApiCommand } from '../base-command.js'
import { loginPassword } from '../config.js'
import { writeCredentials } from '../credentials.js'

/** The password from standard input: typed without echo on a terminal, else the first line piped in. */
async function readPassword(): Promise<string> {
  const terminal = process.stdin.isTTY === true
  const lines = createInterface({ input: process.stdin, output: terminal ? process.stderr : undefined, terminal })
  if (terminal) {
    process.stderr.write('Password: ')
    // Swallow the echo of what is typed.
    ;(lines as unknown as { _writeToOutput: (text: string) => void })._writeToOutput = () => {}
  }
  try {
    for await (const line of lines) return line
    return ''
  } finally {
    lines.close()
    if (terminal) process.stderr.write('\n')
  }
}

export default class Login extends ApiCommand {
  static override summary = 'Sign in and store the token for the next commands.'
  static override description =
    'With --email, exchanges email and password for a JWT (POST /api/v1/auth/login). The password comes from ' +
    'COMMERCE_PASSWORD, or standard input (typed without echo, or piped), so it never shows in the process list. ' +
    'With --token, stores an API key (ck_…) or access token after checking it. The token is kept with the base URL ' +
    'in credentials.json in the config directory, readable by you only, and is sent only to that base URL.'
  static override examples = [
    '<%= config.bin %> <%= command.id %> --email admin@example.com --base-url https://shop.example.com',
    'printf %s "$PASSWORD" | <%= config.bin %> <%= command.id %> --email admin@example.com',
    '<%= config.bin %> <%= command.id %> --token ck_…',
  ]
  static override enableJsonFlag = true
  static override flags = {
    email: Flags.string({ summary: 'The account to sign in as.', exclusive: ['token'] }),
    // Not a flag: a password on the command line is visible to every user of the machine.
  }

  async run(): Promise<{ base_url: string; subject: string; file: string; expires_in: number | null }> {
    const { flags } = await this.parse(Login)
    const connection = await this.connection({ ...flags, token: undefined })
    let token: string
    let subject: string
    let expiresIn: number | null = null
    if (flags.email !== undefined) {
      const password = loginPassword() ?? (await readPassword())
      const answer = await callApi(connection, { method: 'POST', path: '/api/v1/auth/login', body: { email: flags.email, password } })
      const body = answer.body as { token: string; expires_in: number; user: { email: string; role: string } }
      token = body.token
      expiresIn = body.expires_in
      subject = `${body.user.email} (${body.user.role})`
    } else if (flags.token !== undefined) {
      token = flags.token
      // 200: a user's token; 403: a valid key or client token without a user account. 401 is thrown.
      try {
        const me = await callApi({ ...connection, token }, { method: 'GET', path: '/api/v1/auth/me' })
        const user = (me.body as { user: { email: string; role: string } }).user
        subject = `${user.email} (${user.role})`
      } catch (error) {
        if (!(error instanceof ApiRequestError && error.status === 403)) throw error
        subject = token.startsWith('ck_') ? 'API key' : 'OAuth client'
      }
    } else throw new Errors.CLIError('Give --email (then the password on standard input) or --token')
    const file = await writeCredentials(this.config.configDir, { base_url: connection.baseUrl, token, subject })
    this.log(`Signed in to ${connection.baseUrl} as ${subject}; token stored in ${file}`)
    return { base_url: connection.baseUrl, subject, file, expires_in: expiresIn }
  }
}
