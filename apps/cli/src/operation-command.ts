/** One command class per API operation, built from its description in operations.json. */
import { randomUUID } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { basename } from 'node:path'
import { Args, Errors, Flags, type Command, type Interfaces } from '@oclif/core'
import { callApi } from './api-client.js'
import { ApiCommand } from './base-command.js'
import type { Field, Operation } from './operations.js'
import { render } from './output.js'

const MAX_LISTED_OPTIONS = 20

function flagFor(field: Field) {
  const summary = `${field.description || field.path.join('.')}${field.required ? ' (required)' : ''}`
  const helpGroup = field.path.length > 1 ? field.path[0]!.toUpperCase() : undefined
  if (field.kind === 'boolean') return Flags.boolean({ summary, allowNo: true, helpGroup })
  if (field.kind === 'list') return Flags.string({ summary: `${summary}; comma-separated`, multiple: true, delimiter: ',', helpGroup })
  // Long lists (country codes) are left to the API to check: listing them would drown the help.
  const options = field.options && field.options.length <= MAX_LISTED_OPTIONS ? field.options : undefined
  const hint = field.options && !options ? `; one of ${field.options.length} codes such as ${field.options[0]}` : ''
  return Flags.string({ summary: `${summary}${hint}`, helpGroup, ...(options ? { options } : {}) })
}

/**
 * A flag's text as the API wants it: numbers as numbers, JSON parsed, `null` for nullable fields.
 * What is plainly wrong (text for a number, a value not among the options) is a usage error, exit
 * 2, before anything is sent.
 */
function valueOf(field: Field, raw: unknown): unknown {
  if (typeof raw !== 'string') return raw
  if (field.nullable && raw === 'null') return null
  // oclif checks the short option lists itself; the long ones (country codes) are checked here.
  if (field.options && !field.options.includes(raw)) {
    throw new Errors.CLIError(`Expected --${field.flag}=${raw} to be one of ${field.options.length} codes such as ${field.options.slice(0, 3).join(', ')}`, { exit: 2 })
  }
  if (field.kind === 'number' || field.kind === 'integer') {
    const number = Number(raw)
    if (raw.trim() === '' || !Number.isFinite(number) || (field.kind === 'integer' && !Number.isInteger(number))) {
      throw new Errors.CLIError(`--${field.flag} must be ${field.kind === 'integer' ? 'a whole number' : 'a number'} (got '${raw}')`, { exit: 2 })
    }
    return number
  }
  if (field.kind === 'json') {
    try {
      return JSON.parse(raw)
    } catch {
      throw new Errors.CLIError(`--${field.flag} must be JSON (got '${raw}')`, { exit: 2 })
    }
  }
  return raw
}

function valueAt(source: unknown, path: readonly string[]): unknown {
  let node = source
  for (const key of path) node = typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[key] : undefined
  return node
}

/**
 * The required fields a request lacks once `--data` and the flags are merged: those the operation
 * requires, and those an object that is sent requires (an optional billing address needs its city).
 */
function missingFields(fields: readonly Field[], request: Record<string, unknown>): Field[] {
  return fields.filter((field) => {
    if (valueAt(request, field.path) !== undefined) return false
    const objectSent = field.path.length > 1 && valueAt(request, field.path.slice(0, -1)) !== undefined
    return field.required || (field.requiredInObject === true && objectSent)
  })
}

function setAt(target: Record<string, unknown>, path: readonly string[], value: unknown) {
  let node = target
  for (const key of path.slice(0, -1)) {
    if (typeof node[key] !== 'object' || node[key] === null) node[key] = {}
    node = node[key] as Record<string, unknown>
  }
  node[path.at(-1)!] = value
}

/** `--data`: JSON itself, `@file` or `-` for standard input. */
async function readData(data: string): Promise<Record<string, unknown>> {
  let text = data
  if (data === '-') {
    const chunks: Buffer[] = []
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
    text = Buffer.concat(chunks).toString('utf8')
  } else if (data.startsWith('@')) text = await readFile(data.slice(1), 'utf8')
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new Errors.CLIError('--data must be a JSON object, @file or - (standard input)')
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Errors.CLIError('--data must be a JSON object')
  return value as Record<string, unknown>
}

function example(operation: Operation): string[] {
  const placeholder = (field: Field) =>
    field.options?.[0] ?? (field.kind === 'number' ? '19.99' : field.kind === 'integer' ? '1' : field.kind === 'json' ? "'{…}'" : `<${field.flag}>`)
  const args = operation.args.map((arg) => `<${arg.name}>`)
  const required = (operation.body ?? []).filter((field) => field.required && field.kind !== 'boolean')
  const head = ['<%= config.bin %> <%= command.id %>', ...args].join(' ')
  const full = [head, ...required.map((field) => `--${field.flag} ${placeholder(field)}`)].join(' ')
  return [full, `${full} --json`]
}

/** `--file` and the body's fields as a multipart form: the file as `file`, each field as text. */
async function fileForm(file: string, fields: Record<string, unknown>): Promise<FormData> {
  let data: Buffer
  try {
    data = await readFile(file)
  } catch (error) {
    throw new Errors.CLIError(`--file: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, { exit: 2 })
  }
  const form = new FormData()
  for (const [name, value] of Object.entries(fields)) if (value !== undefined && value !== null) form.append(name, String(value))
  form.append('file', new Blob([data]), basename(file))
  return form
}

export function operationCommand(operation: Operation): Command.Class {
  const fields = [...operation.query, ...(operation.body ?? [])]
  const flags: Interfaces.FlagInput = {}
  for (const field of fields) flags[field.flag] = flagFor(field)
  if (operation.body) {
    flags.data = Flags.string({ summary: 'The request body as JSON, @file or - (standard input); the other flags override its fields.' })
  }
  if (operation.file) {
    flags.file = Flags.string({ summary: 'A file to send (multipart/form-data); the other body flags go with it as form fields.' })
  }
  if (operation.idempotent) {
    flags['idempotency-key'] = Flags.string({
      summary: 'Idempotency-Key header (16–255 characters): repeat a run with the same key to retry safely. Default: a new random key.',
    })
  }

  return class OperationCommand extends ApiCommand {
    static override summary = operation.summary
    // The API's description ends with who may call it ("Access: …").
    static override description = [operation.description, `Calls ${operation.method} ${operation.path}.`].filter(Boolean).join('\n\n')
    static override examples = example(operation)
    static override enableJsonFlag = true
    static override args = Object.fromEntries(
      operation.args.map((arg) => [arg.name, Args.string({ required: true, description: arg.description || arg.param })]),
    )
    static override flags = flags

    async run(): Promise<unknown> {
      const { args, flags: given } = await this.parse(OperationCommand)
      const values = given as Record<string, unknown>
      const path = operation.args.reduce(
        (result, arg) => result.replace(`{${arg.param}}`, encodeURIComponent(String(args[arg.name]))),
        operation.path,
      )
      const query: Record<string, string | string[]> = {}
      for (const field of operation.query) {
        const value = values[field.flag]
        if (value !== undefined) query[field.path[0]!] = Array.isArray(value) ? value.map(String) : String(valueOf(field, value))
      }
      let body: Record<string, unknown> | undefined
      if (operation.body) {
        body = typeof values.data === 'string' ? await readData(values.data) : {}
        for (const field of operation.body) {
          if (values[field.flag] !== undefined) setAt(body, field.path, valueOf(field, values[field.flag]))
        }
      }
      // Checked here, not by oclif: a required field may come in --data instead of its flag (or be the --file).
      const missing = typeof values.file === 'string' ? [] : [...missingFields(operation.query, query), ...missingFields(operation.body ?? [], body ?? {})]
      if (missing.length > 0) {
        const names = missing.map((field) => `--${field.flag}`).join(', ')
        const data = operation.body ? ` (or ${missing.length > 1 ? 'their fields' : 'its field'} in --data)` : ''
        throw new Errors.CLIError(`Missing required flag${missing.length > 1 ? 's' : ''} ${names}${data}\nSee more help with --help`, { exit: 2 })
      }
      const headers: Record<string, string> = {}
      if (operation.idempotent) headers['idempotency-key'] = (values['idempotency-key'] as string | undefined) ?? `cli-${randomUUID()}`
      const connection = await this.connection(given)
      if (!operation.sendsToken) connection.token = undefined
      const form = typeof values.file === 'string' ? await fileForm(values.file, body ?? {}) : undefined
      const response = await callApi(connection, { method: operation.method, path, query, ...(form ? { form } : { body }), headers })
      // A file goes out byte for byte (`commerce exports download <id> > products.csv`).
      if (Buffer.isBuffer(response.body)) {
        if (!this.jsonEnabled()) process.stdout.write(response.body)
        return response.body.toString('utf8')
      }
      if (!this.jsonEnabled()) this.log(render(response.body, operation.id))
      return response.body
    }
  }
}
