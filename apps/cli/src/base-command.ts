/** What every `commerce` command shares: expected failures become a one-line message and exit 1, usage errors exit 2. */
import { Command, Errors, Flags, type Interfaces } from '@oclif/core'
import { ApiRequestError, ApiUnreachableError, type Connection } from './api-client.js'
import { readCredentials } from './credentials.js'

export const DEFAULT_BASE_URL = 'http://localhost:3000'

export abstract class BaseCommand extends Command {
  /** The failure being reported, for `--json`: the API's own error body when there is one. */
  private failure: { error: { code: string; message: string; details?: unknown } } | undefined

  // Bad configuration, refused business rules and API errors are the user's to fix: show the
  // message, not a stack trace. Anything else is a bug and keeps oclif's full report.
  protected override async catch(error: Error & { exitCode?: number }): Promise<unknown> {
    let reported: Error & { exitCode?: number } = error
    if (error instanceof ApiRequestError) {
      this.failure = error.body
      reported = new Errors.CLIError(`${error.message} (${error.body.error.code}, HTTP ${error.status})`, { exit: 1 })
    } else if (error instanceof Errors.CLIError && error.oclif.exit === 2) {
      // A usage error (bad flags or arguments, found before anything is sent): oclif prints the
      // command's usage after an error marked showHelp that has parse.input.argv, and under --json
      // takes the exit code from `exitCode`.
      this.failure = { error: { code: 'usage_error', message: error.message } }
      Object.assign(error, { showHelp: true, parse: { input: { argv: this.argv } }, exitCode: 2 })
    } else {
      let code: string | undefined
      if (error instanceof ApiUnreachableError) code = 'api_unreachable'
      // By name: @commerce/runtime's config and @commerce/domain are loaded only when a database
      // command runs (they are slow to load).
      if (error.name === 'ConfigError' || error.name === 'EmbeddedPostgresMissingError') code = 'config_error'
      if (error.name === 'DomainError') code = (error as Error & { code: string }).code
      if (code) {
        this.failure = { error: { code, message: error.message } }
        reported = new Errors.CLIError(error.message, { exit: 1 })
      }
    }
    return super.catch(reported) // rethrows, unless --json: then it prints the error and sets the exit code
  }

  /** `--json` failures have the API's error shape: {"error": {"code", "message"}}. */
  protected override toErrorJson(error: unknown): unknown {
    const message = error instanceof Error ? error.message : String(error)
    return this.failure ?? { error: { code: 'error', message } }
  }
}

/** A command that calls the API: where it is and who is calling. */
export abstract class ApiCommand extends BaseCommand {
  static override baseFlags = {
    'base-url': Flags.string({
      summary: `The API's base URL (default: the one stored by login, else ${DEFAULT_BASE_URL}).`,
      env: 'COMMERCE_BASE_URL',
      helpGroup: 'API',
    }),
    token: Flags.string({
      summary: 'A JWT, OAuth access token or API key (ck_…) (default: the one stored by login).',
      env: 'COMMERCE_TOKEN',
      helpGroup: 'API',
    }),
  }

  /** Flags first, then the environment (through the flags), then what `login` stored. */
  protected async connection(flags: Interfaces.InferredFlags<typeof ApiCommand.baseFlags>): Promise<Connection> {
    const stored = await readCredentials(this.config.configDir)
    const baseUrl = flags['base-url'] ?? stored?.base_url ?? DEFAULT_BASE_URL
    // A stored token belongs to the server it came from: never send it anywhere else.
    const token = flags.token ?? (stored && sameOrigin(stored.base_url, baseUrl) ? stored.token : undefined)
    return { baseUrl, token }
  }
}

function sameOrigin(a: string, b: string): boolean {
  try {
    return new URL(a).origin === new URL(b).origin
  } catch {
    return false
  }
}
