/**
 * The connections to each receiver's origin that attempts may use at once, per worker: as many as
 * the delivery agent keeps per origin (ssrf.ts). An attempt takes one before it starts, so that
 * it never waits in undici's queue, where the wait would count against the receiver's time limit
 * although its request had not left the process. One that gets none within its wait is not made
 * (delivery.ts puts it off): the wait is ours, not the receiver's.
 */

/** Gives the connection back; calling it again does nothing. */
export type Release = () => void

export interface OriginConnections {
  /** A connection to `origin` as soon as one is free, within `waitMs`; undefined when none came free in time. */
  take(origin: string, waitMs: number): Promise<Release | undefined>
}

interface Origin {
  inUse: number
  /** Attempts waiting for a connection, first come first served. */
  waiting: ((release: Release) => void)[]
}

export function createOriginConnections(perOrigin: number): OriginConnections {
  const origins = new Map<string, Origin>()

  const releaseOf = (key: string, origin: Origin): Release => {
    let released = false
    return () => {
      if (released) return
      released = true
      const next = origin.waiting.shift()
      // Handed on: it stays in use.
      if (next) return next(releaseOf(key, origin))
      origin.inUse -= 1
      if (origin.inUse === 0) origins.delete(key)
    }
  }

  return {
    take(key, waitMs) {
      let origin = origins.get(key)
      if (!origin) origins.set(key, (origin = { inUse: 0, waiting: [] }))
      if (origin.inUse < perOrigin) {
        origin.inUse += 1
        return Promise.resolve(releaseOf(key, origin))
      }
      const state = origin
      return new Promise((resolve) => {
        const grant = (release: Release) => {
          clearTimeout(timer)
          resolve(release)
        }
        const timer = setTimeout(() => {
          state.waiting.splice(state.waiting.indexOf(grant), 1)
          resolve(undefined)
        }, waitMs)
        state.waiting.push(grant)
      })
    },
  }
}
