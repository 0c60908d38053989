/**
 * Sign-in throttling, and the limits of the other account requests (createAccountLimits).
 *
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
  /** Counts one request against `key` (a window of `windowMs` from its first); answers the count and the window's rest. */
  hit(key: string, windowMs: number): Promise<{ count: number; ttlMs: number }>
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
    async hit(key, windowMs) {
      const entry = increment(key, windowMs)
      return { count: entry.count, ttlMs: entry.endsAt - Date.now() }
    },
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
const HIT = `local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {n, redis.call('PTTL', KEYS[1])}`

function redisStore(redis: Redis): CountStore {
  return {
    async hit(key, windowMs) {
      const [count, ttlMs] = (await redis.eval(HIT, 1, key, windowMs)) as [number, number]
      return { count, ttlMs }
    },
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

export interface AccountLimitOptions {
  /** Requests of one kind for one account within the window (ACCOUNT_RATE_LIMIT_MAX). */
  perAccount: number
  /** Requests of one kind from one client address within the window (ACCOUNT_RATE_LIMIT_IP_MAX). */
  perAddress: number
  windowMs: number
}

/**
 * The limits of the account requests that send an email or try a secret (password reset, email
 * verification, email change, password change): per kind of request, so many per account and so
 * many per client address in a window from the first, counted before the work is done, in the
 * store the sign-in throttle uses (Redis with REDIS_URL, else this instance's memory; a Redis that
 * cannot be reached lets requests through). An unknown email address is counted as a known one,
 * so a 429 tells nothing about whether an account exists.
 */
export function createAccountLimits(options: AccountLimitOptions, redis: Redis | null, log: FastifyBaseLogger) {
  const store = redis ? redisStore(redis) : memoryStore()
  return {
    /** Counts a request of `kind` by `account` (an address or a user id; none when unknown yet) from `address`; the wait when over a limit. */
    async refused(kind: string, account: string | null, address: string): Promise<{ retryAfterMs: number } | null> {
      const keys = [{ key: `commerce:account-limit:${kind}:ip:${address}`, max: options.perAddress }]
      if (account !== null) keys.push({ key: `commerce:account-limit:${kind}:account:${account.trim().toLowerCase()}`, max: options.perAccount })
      try {
        // Each key alone: in a Redis Cluster the two live in different slots.
        const counts = await Promise.all(keys.map(({ key }) => store.hit(key, options.windowMs)))
        const over = counts.filter((count, n) => count.count > keys[n]!.max)
        return over.length === 0 ? null : { retryAfterMs: Math.max(...over.map((count) => count.ttlMs)) }
      } catch (error) {
        log.warn({ err: error }, 'account request limits store (Redis) unavailable: requests not limited')
        return null
      }
    },
  }
}
