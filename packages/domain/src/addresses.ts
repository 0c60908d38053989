/**
 * Which IP addresses a webhook may be sent to: only globally routable ones. Everything else —
 * this network, private, shared (CGNAT), loopback, link-local (cloud metadata at 169.254.169.254),
 * documentation, benchmarking, multicast, reserved, IPv6 unique-local, and IPv4 addresses
 * embedded in IPv6 (mapped, NAT64, 6to4) — is refused: a subscription must not reach the
 * service's own network (SSRF). Pure parsing, no DNS: the caller checks each resolved address.
 */

// [first address, prefix length] of each non-global IPv4 range.
const IPV4_BLOCKED: readonly (readonly [string, number])[] = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
]

/** The 32-bit value of a dotted-quad IPv4 address, or undefined for anything else. */
function ipv4Value(text: string): number | undefined {
  const parts = text.split('.')
  if (parts.length !== 4) return undefined
  let value = 0
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part) || Number(part) > 255) return undefined
    value = value * 256 + Number(part)
  }
  return value
}

const IPV4_RANGES = IPV4_BLOCKED.map(([first, bits]) => {
  const size = 2 ** (32 - bits)
  const start = ipv4Value(first)!
  return { start, end: start + size - 1 }
})

function ipv4Blocked(value: number): boolean {
  return IPV4_RANGES.some((range) => value >= range.start && value <= range.end)
}

/** The eight 16-bit groups of an IPv6 address (a trailing dotted quad allowed), or undefined. */
function ipv6Groups(text: string): number[] | undefined {
  let address = text.toLowerCase().replace(/%.*$/, '')
  const lastColon = address.lastIndexOf(':')
  if (address.slice(lastColon + 1).includes('.')) {
    // ::ffff:1.2.3.4 → ::ffff:102:304
    const v4 = ipv4Value(address.slice(lastColon + 1))
    if (v4 === undefined) return undefined
    address = `${address.slice(0, lastColon + 1)}${Math.floor(v4 / 65536).toString(16)}:${(v4 % 65536).toString(16)}`
  }
  const halves = address.split('::')
  if (halves.length > 2) return undefined
  const parse = (part: string) => (part === '' ? [] : part.split(':'))
  const head = parse(halves[0]!)
  const tail = halves.length === 2 ? parse(halves[1]!) : []
  if (![...head, ...tail].every((group) => /^[0-9a-f]{1,4}$/.test(group))) return undefined
  const missing = 8 - head.length - tail.length
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined
  return [...head, ...new Array<string>(missing).fill('0'), ...tail].map((group) => parseInt(group, 16))
}

function ipv6Blocked(g: readonly number[]): boolean {
  const embeddedV4 = (high: number, low: number) => ipv4Blocked(high * 65536 + low)
  const zeros = (from: number, to: number) => g.slice(from, to).every((group) => group === 0)
  if (zeros(0, 8)) return true // ::
  if (zeros(0, 7) && g[7] === 1) return true // ::1
  if (zeros(0, 5) && g[5] === 0xffff) return embeddedV4(g[6]!, g[7]!) // ::ffff:a.b.c.d
  if (zeros(0, 6)) return true // deprecated IPv4-compatible ::a.b.c.d
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return embeddedV4(g[6]!, g[7]!) // NAT64
  if (g[0] === 0x2002) return embeddedV4(g[1]!, g[2]!) // 6to4
  if (g[0] === 0x2001 && g[1] === 0x0db8) return true // documentation
  if (g[0] === 0x0100 && zeros(1, 4)) return true // discard-only 100::/64
  const first = g[0]!
  if ((first & 0xfe00) === 0xfc00) return true // unique local fc00::/7
  if ((first & 0xffc0) === 0xfe80) return true // link-local fe80::/10
  if ((first & 0xffc0) === 0xfec0) return true // site-local fec0::/10
  if ((first & 0xff00) === 0xff00) return true // multicast
  return false
}

/**
 * True unless `address` (an IPv4 or IPv6 literal, brackets allowed) is a globally routable
 * unicast address. Anything that does not parse as an address counts as not public.
 */
export function isPublicAddress(address: string): boolean {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address
  const v4 = ipv4Value(bare)
  if (v4 !== undefined) return !ipv4Blocked(v4)
  const v6 = bare.includes(':') ? ipv6Groups(bare) : undefined
  if (v6 !== undefined) return !ipv6Blocked(v6)
  return false
}
