import { Transform } from 'node:stream'
import { FileTooLargeError } from './types.js'

/**
 * A pass-through that counts the bytes going through it, and fails with FileTooLargeError past
 * `maxBytes`. Piped into, it stays paused until its reader reads (a `data` listener on the source
 * would start the flow before an asynchronous reader is ready, and lose what flowed meanwhile).
 */
export function byteCounter(maxBytes = Number.POSITIVE_INFINITY): Transform & { readonly bytes: number } {
  let bytes = 0
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length
      if (bytes > maxBytes) done(new FileTooLargeError(maxBytes))
      else done(null, chunk)
    },
  })
  return Object.defineProperty(counter, 'bytes', { get: () => bytes }) as Transform & { readonly bytes: number }
}
