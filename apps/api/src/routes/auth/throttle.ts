/**
 * Sign-in throttling, as Auth0's brute-force protection and the OWASP Authentication Cheat Sheet
 * describe it: failed sign-ins are counted per account *and client address*, and a success from
 * that address clears its count, so neither a stranger's wrong passwords nor the owner's own
 * scripts can lock an account. Past `maxFailures` that address is refused (429) for that account
 * until the window ends; the owner elsewhere is not. Against guessing spread over many addresses,
 * an account with `slowdownAfter` failures from all addresses in the window has every attempt on it
 * wait `slowdownDelayMs` first: slower, never refused.
 *
 * The counts live in the rate limiter's Redis when REDIS_URL is set (every API instance sees the
 * same counts) and in this instance's memory otherwise. Like the rate limiter, a Redis that cannot
 * be reached lets sign-ins through unthrottled rather than failing them.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { Redis } from 'ioredis'

export interface LoginThrottleOptions {
  /** Failed sign-ins of one account from one address before that address is refused for it. */
  maxFailures: number
  /** How long failures count, from the first one. */
  windowMs: number
  /** Failed sign-ins of one account from all addresses before each attempt on it is slowed. */
  slowdownAfter: number
  slowdownDelayMs: number
}

/** What an attempt is allowed: `retryAfterMs` when refused, `delayMs` to wait before the password is checked. */
export type AttemptVerdict = { refused: true; retryAfterMs: number } | { refused: false; delayMs: number }

interface Counts {
  /** Attempts of this account from this address now counted (this one included). */
  fromAddress: number
  /** Milliseconds until that count ends. */
  fromAddressTtlMs: number
  /** Failures of this account from every address. */
  account: number
}

interface CountStore {
  /**
   * Counts the attempt for its address before the password is checked (so that parallel guesses
   * cannot all slip under the limit; a success takes it back) and reads the account's failures.
   */
  begin(addressKey: string, accountKey: string, windowMs: number): Promise<Counts>
  fail(accountKey: string, windowMs: number): Promise<void>
  succeed(addressKey: string): Promise<void>
}

/** The most (account, address) and account counts one instance keeps in memory; the oldest go first. */
const MAX_MEMORY_ENTRIES = 100_000

function memoryStore(): CountStore {
  const counts = new Map<string, { count: number; endsAt: number }>()
  const increment = (key: string, windowMs: number) => {
    const now = Date.now()
    let entry = counts.get(key)
    if (!entry || entry.endsAt <= now) {
      counts.delete(key)
      if (counts.size >= MAX_MEMORY_ENTRIES) counts.delete(counts.keys().next().value!)
      entry = { count: 0, endsAt: now + windowMs }
      counts.set(key, entry)
    }
    entry.count++
    return entry
  }
  const current = (key: string) => {
    const entry = counts.get(key)
    return entry && entry.endsAt > Date.now() ? entry.count : 0
  }
  return {
    async begin(addressKey, accountKey, windowMs) {
      const entry = increment(addressKey, windowMs)
      return { fromAddress: entry.count, fromAddressTtlMs: entry.endsAt - Date.now(), account: current(accountKey) }
    },
    async fail(accountKey, windowMs) {
      increment(accountKey, windowMs)
    },
    async succeed(addressKey) {
      counts.delete(addressKey)
    },
  }
}

const BEGIN = `local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {n, redis.call('PTTL', KEYS[1]), tonumber(redis.call('GET', KEYS[2]) or '0')}`
const FAIL = `if redis.call('INCR', KEYS[1]) == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end`

function redisStore(redis: Redis): CountStore {
  return {
    async begin(addressKey, accountKey, windowMs) {
      const [fromAddress, ttl, account] = (await redis.eval(BEGIN, 2, addressKey, accountKey, windowMs)) as [number, number, number]
      return { fromAddress, fromAddressTtlMs: ttl, account }
    },
    async fail(accountKey, windowMs) {
      await redis.eval(FAIL, 1, accountKey, windowMs)
    },
    async succeed(addressKey) {
      await redis.del(addressKey)
    },
  }
}

export function createLoginThrottle(options: LoginThrottleOptions, redis: Redis | null, log: FastifyBaseLogger) {
  const store = redis ? redisStore(redis) : memoryStore()
  // The account in braces: a Redis Cluster keeps both keys of an account in one slot (BEGIN reads both).
  const accountKey = (email: string) => `commerce:login:{${email.trim().toLowerCase()}}`
  const addressKey = (email: string, address: string) => `${accountKey(email)}:${address}`
  const failOpen = (error: unknown) => log.warn({ err: error }, 'sign-in throttle store (Redis) unavailable: sign-in not throttled')

  return {
    async attempt(email: string, address: string): Promise<AttemptVerdict> {
      let counts: Counts
      try {
        counts = await store.begin(addressKey(email, address), accountKey(email), options.windowMs)
      } catch (error) {
        failOpen(error)
        return { refused: false, delayMs: 0 }
      }
      if (counts.fromAddress > options.maxFailures) return { refused: true, retryAfterMs: counts.fromAddressTtlMs }
      return { refused: false, delayMs: counts.account >= options.slowdownAfter ? options.slowdownDelayMs : 0 }
    },
    /** After a wrong password (or an unknown email): the attempt stays counted for its address and counts for the account. */
    failed(email: string): Promise<void> {
      return store.fail(accountKey(email), options.windowMs).catch(failOpen)
    },
    /** After a right password: this address starts again from nothing. */
    succeeded(email: string, address: string): Promise<void> {
      return store.succeed(addressKey(email, address)).catch(failOpen)
    },
  }
}
