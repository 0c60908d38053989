/** What every `commerce` command shares: expected failures become a one-line message and exit 1. */
import { Command, Errors } from '@oclif/core'
import { DomainError } from '@commerce/domain'
import { ConfigError } from './config.js'

export abstract class BaseCommand extends Command {
  /** The machine-readable code of the failure being reported, for `--json`. */
  private failureCode: string | undefined

  // Bad configuration and refused business rules are the user's to fix: show the message, not
  // a stack trace. Anything else is a bug and keeps oclif's full report.
  protected override async catch(error: Error & { exitCode?: number }): Promise<unknown> {
    let reported: Error & { exitCode?: number } = error
    if (error instanceof ConfigError) this.failureCode = 'config_error'
    if (error instanceof DomainError) this.failureCode = error.code
    if (this.failureCode) reported = new Errors.CLIError(error.message, { exit: 1 })
    return super.catch(reported) // rethrows, unless --json: then it prints the error and sets the exit code
  }

  /** `--json` failures have the API's error shape: {"error": {"code", "message"}}. */
  protected override toErrorJson(error: unknown): unknown {
    const message = error instanceof Error ? error.message : String(error)
    return { error: { code: this.failureCode ?? 'error', message } }
  }
}
