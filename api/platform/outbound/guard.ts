// The check every request to a tenant-supplied URL passes: scheme, no credentials in the URL, and every address
// the host resolves to must be public (or allow-listed). The caller then connects only to the checked addresses.
import { classify, embeddedV4, inCidr, parseIp, type AddressClass } from './addresses'
import type { OutboundPolicy, ResolvedAddress } from './policy'

export type RefusalReason = AddressClass | 'invalid-url' | 'scheme' | 'userinfo' | 'unresolvable'

/** A destination the guard will not reach. The message names only the reason class; `detail` (host and address)
 *  is for the server's log, never for an API caller: it would tell a tenant what our network resolves. */
export class OutboundRefused extends Error {
  constructor(
    readonly reason: RefusalReason,
    readonly detail: string,
  ) {
    super(`outbound request refused: ${reason}`)
    this.name = 'OutboundRefused'
  }
}

export interface CheckedTarget {
  url: URL
  /** The URL's host without IPv6 brackets: what TLS verifies and SNI names. */
  hostname: string
  /** The only addresses a connection may go to. */
  addresses: ResolvedAddress[]
}

function allowed(policy: OutboundPolicy, hostname: string, address: string): RefusalReason | null {
  const ip = parseIp(address)
  if (!ip) return 'reserved'
  const why = classify(ip)
  // Cloud metadata stays refused whatever the allow-list says: it hands out the platform's own credentials.
  if (why === null || why === 'metadata') return why
  if (policy.allowHosts.has(hostname.replace(/\.$/, ''))) return null
  const v4 = embeddedV4(ip)
  return policy.allowCidrs.some((c) => inCidr(ip, c) || (v4 !== null && inCidr(v4, c))) ? null : why
}

async function addressesOf(policy: OutboundPolicy, hostname: string): Promise<ResolvedAddress[]> {
  const literal = parseIp(hostname)
  if (literal) return [{ address: hostname, family: literal.v6 ? 6 : 4 }]
  const found = await policy.resolve(hostname).catch(() => [])
  if (found.length === 0) throw new OutboundRefused('unresolvable', hostname)
  return found
}

/** Checks a URL and resolves its host once; registration-time validation calls it too. Literal IPs in any form
 *  the WHATWG parser accepts (decimal, octal, hex, IPv4-mapped) arrive here already normalised by `new URL`. */
export async function checkUrl(input: string | URL, policy: OutboundPolicy): Promise<CheckedTarget> {
  let url: URL
  try {
    url = new URL(String(input))
  } catch {
    throw new OutboundRefused('invalid-url', String(input).slice(0, 200))
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundRefused('scheme', url.protocol)
  if (url.username || url.password) throw new OutboundRefused('userinfo', url.host)
  const hostname = url.hostname.replace(/^\[|\]$/g, '')
  const addresses = await addressesOf(policy, hostname)
  for (const a of addresses) {
    const why = allowed(policy, hostname, a.address)
    if (why) throw new OutboundRefused(why, `${hostname} → ${a.address}`)
  }
  return { url, hostname, addresses }
}
