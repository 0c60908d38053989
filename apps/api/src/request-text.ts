/**
 * The text a request may carry: JSON bodies in UTF-8 (another charset is 415), query strings
 * percent-encoded in UTF-8, and every string of a body, query or path well-formed Unicode. Nothing
 * is altered on the way in. Bytes that are not UTF-8 become lone surrogates (U+DC80–U+DCFF, as
 * Python's `surrogateescape` does) and lone surrogates — `"\ud800"` in JSON, which JSON.parse
 * accepts and PostgreSQL would store as U+FFFD — are refused by the validators with a 400 naming
 * the field (`withWellFormedText`), so one rule covers both wherever they appear.
 */
import type { ErrorObject, ValidateFunction } from 'ajv'
import type { FastifyRequest } from 'fastify'
import { ApiError } from './errors.js'

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true })
const UTF8_NAMES = new Set(['utf-8', 'utf8'])
const CHARSET = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i

/** Fastify's JSON parser (prototype-poisoning checks, empty-body error) for the decoded text. */
type JsonParser = (request: FastifyRequest, text: string, done: (error: Error | null, body?: unknown) => void) => void

/**
 * The `application/json` parser: refuses a charset other than UTF-8 (no charset is UTF-8, RFC
 * 8259 §8.1) and hands `parseJson` the body decoded without losing a byte (Fastify's own parser
 * decodes as UTF-8 whatever the charset and turns bad bytes into U+FFFD).
 */
export function jsonBodyParser(parseJson: JsonParser) {
  return (request: FastifyRequest, body: Buffer, done: (error: Error | null, body?: unknown) => void) => {
    const match = CHARSET.exec(request.headers['content-type'] ?? '')
    const charset = match ? (match[1] ?? match[2] ?? '') : 'utf-8'
    if (!UTF8_NAMES.has(charset.toLowerCase())) {
      done(new ApiError('unsupported_media_type', `The charset '${charset}' is not supported; send JSON in UTF-8`))
      return
    }
    parseJson(request, decodeUtf8(body), done)
  }
}

/** UTF-8 to text; each byte that is not part of a valid sequence becomes the lone surrogate U+DC00 + byte. */
export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return STRICT_UTF8.decode(bytes)
  } catch {
    let text = ''
    let start = 0
    for (let at = 0; at < bytes.length; ) {
      const length = validSequenceLength(bytes, at)
      if (length > 0) {
        at += length
        continue
      }
      text += Buffer.from(bytes.buffer, bytes.byteOffset + start, at - start).toString('utf8') + String.fromCharCode(0xdc00 | bytes[at]!)
      start = ++at
    }
    return text + Buffer.from(bytes.buffer, bytes.byteOffset + start, bytes.length - start).toString('utf8')
  }
}

/** The length of the well-formed UTF-8 sequence at `at`, or 0 (Unicode 15, table 3-7: no overlongs, surrogates or values past U+10FFFF). */
function validSequenceLength(bytes: Uint8Array, at: number): number {
  const first = bytes[at]!
  if (first < 0x80) return 1
  let length: number
  let low = 0x80
  let high = 0xbf
  if (first >= 0xc2 && first <= 0xdf) length = 2
  else if (first >= 0xe0 && first <= 0xef) {
    length = 3
    if (first === 0xe0) low = 0xa0
    if (first === 0xed) high = 0x9f
  } else if (first >= 0xf0 && first <= 0xf4) {
    length = 4
    if (first === 0xf0) low = 0x90
    if (first === 0xf4) high = 0x8f
  } else return 0
  if (at + length > bytes.length) return 0
  const second = bytes[at + 1]!
  if (second < low || second > high) return 0
  for (let next = at + 2; next < at + length; next++) {
    if (bytes[next]! < 0x80 || bytes[next]! > 0xbf) return 0
  }
  return length
}

/**
 * The query-string parser (Fastify's keeps a value whose percent-encoding is not UTF-8 undecoded,
 * so `?search=caf%E9` searched for the text `caf%E9`): names and values are decoded as UTF-8,
 * `+` is a space, a repeated name gives an array, and bytes that are not UTF-8 become lone
 * surrogates that the validators refuse.
 */
export function parseQueryString(query: string): Record<string, string | string[]> {
  const result = new QueryObject()
  // On the hot path of every request: indexOf over the text rather than split's arrays.
  for (let start = 0; start < query.length; ) {
    let end = query.indexOf('&', start)
    if (end < 0) end = query.length
    if (end > start) {
      const equals = query.indexOf('=', start)
      const hasValue = equals >= 0 && equals < end
      const name = decodeQueryComponent(query.slice(start, hasValue ? equals : end))
      const value = hasValue ? decodeQueryComponent(query.slice(equals + 1, end)) : ''
      const seen = result[name]
      result[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value]
    }
    start = end + 1
  }
  return result
}

/** An object without a prototype (a parameter named `__proto__` or `constructor` is just a name), made fast. */
const QueryObject = function () {} as unknown as new () => Record<string, string | string[]>
QueryObject.prototype = Object.create(null)

function decodeQueryComponent(text: string): string {
  const spaced = text.includes('+') ? text.replaceAll('+', ' ') : text
  if (!spaced.includes('%')) return spaced
  try {
    return decodeURIComponent(spaced)
  } catch {
    // Escapes become bytes and a stray `%` stays as it is (WHATWG URL percent-decoding); then UTF-8.
    const parts = spaced.split(/(%[0-9a-f]{2})/i)
    const bytes = parts.map((part, index) => (index % 2 === 1 ? Buffer.of(parseInt(part.slice(1), 16)) : Buffer.from(part)))
    return decodeUtf8(Buffer.concat(bytes))
  }
}

/** The JSON-pointer paths of the strings and object keys in `value` that are not well-formed Unicode. */
export function illFormedTextPaths(value: unknown): string[] {
  const found: string[] = []
  // A stack, not recursion: a 1 MiB body can nest deeper than the call stack goes.
  const stack: [unknown, string][] = [[value, '']]
  while (stack.length > 0) {
    const [item, path] = stack.pop()!
    if (typeof item === 'string') {
      if (!item.isWellFormed()) found.push(path)
    } else if (Array.isArray(item)) {
      item.forEach((element, index) => stack.push([element, `${path}/${index}`]))
    } else if (item !== null && typeof item === 'object') {
      for (const [key, element] of Object.entries(item)) {
        const at = `${path}/${key.toWellFormed()}`
        if (!key.isWellFormed()) found.push(at)
        stack.push([element, at])
      }
    }
  }
  return found.sort()
}

const NO_PATHS: readonly string[] = []

/** An object without a key (the query of a read without one): no text to check, found without allocating. */
function isEmptyObject(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false
  for (const _key in value) return false
  return true
}

/** A validator that first refuses text that is not well-formed Unicode, naming each field, then runs `validate`. */
export function withWellFormedText(validate: ValidateFunction): ValidateFunction {
  const checked = ((data: unknown, context?: Parameters<ValidateFunction>[1]) => {
    const paths = isEmptyObject(data) ? NO_PATHS : illFormedTextPaths(data)
    if (paths.length > 0) {
      checked.errors = paths.map(
        (instancePath): ErrorObject => ({
          keyword: 'wellFormed',
          instancePath,
          schemaPath: '',
          params: {},
          message: 'is not valid Unicode text (bytes that are not UTF-8, or a lone surrogate)',
        }),
      )
      return false
    }
    const valid = validate(data, context)
    checked.errors = validate.errors
    return valid
  }) as ValidateFunction
  // Fastify passes the parent (so that Ajv can replace a root value) only to functions with it.
  checked.schemaEnv = validate.schemaEnv
  return checked
}
