/**
 * The SSRF guard of webhook deliveries: the address checked is the address connected to. A host
 * name is resolved by our lookup, which refuses non-public addresses, and the socket connects to
 * what it returned, so a name that resolves to a public address when the subscription is saved
 * and to 169.254.169.254 at delivery time (DNS rebinding) is still refused.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { isIP, type LookupFunction } from 'node:net'
import { isPublicAddress } from '@commerce/domain'
import { Agent } from 'undici'

export class RefusedTarget extends Error {
  constructor(readonly address: string) {
    super(`refused: ${address} is not a public address`)
  }
}

/** A DNS lookup for sockets that fails with RefusedTarget when any resolved address is not public. */
export const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, '', 0)
    const refused = addresses.find((entry) => !isPublicAddress(entry.address))
    if (refused) return callback(new RefusedTarget(refused.address), '', 0)
    if (options.all) return (callback as unknown as (error: null, all: LookupAddress[]) => void)(null, addresses)
    callback(null, addresses[0]!.address, addresses[0]!.family)
  })
}

/** An IP literal skips the lookup: check it before connecting. */
export function refusedLiteral(url: URL): RefusedTarget | undefined {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
  return isIP(host) !== 0 && !isPublicAddress(host) ? new RefusedTarget(host) : undefined
}

export interface DeliveryAgentOptions {
  allowPrivateTargets: boolean
  connectTimeoutMs: number
  connectionsPerOrigin: number
}

/** The connection pool deliveries go through: guarded unless private targets are allowed. */
export function createDeliveryAgent(options: DeliveryAgentOptions): Agent {
  return new Agent({
    connect: { timeout: options.connectTimeoutMs, ...(options.allowPrivateTargets ? {} : { lookup: publicOnlyLookup }) },
    // Deliveries go to many hosts: keep few idle sockets and not for long.
    keepAliveTimeout: 4_000,
    connections: options.connectionsPerOrigin,
  })
}
