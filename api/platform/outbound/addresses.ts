// Which IP addresses a request to a tenant-supplied URL may reach. Everything that is not plainly a public
// unicast address is refused: a tenant's URL must never become a way into our own network.
import { isIPv4, isIPv6 } from 'node:net'

export type AddressClass =
  | 'loopback'
  | 'unspecified'
  | 'private'
  | 'link-local'
  | 'cgnat'
  | 'unique-local'
  | 'multicast'
  | 'reserved'
  | 'documentation'
  | 'metadata'

export interface Cidr {
  v6: boolean
  base: bigint
  bits: number
}

export interface Ip {
  v6: boolean
  value: bigint
}

function v4Value(ip: string): bigint {
  return ip.split('.').reduce((acc, octet) => (acc << 8n) | BigInt(Number(octet)), 0n)
}

function v6Groups(part: string): bigint[] {
  if (part === '') return []
  return part.split(':').flatMap((g) => {
    if (!g.includes('.')) return [BigInt(parseInt(g, 16))]
    const v = v4Value(g)
    return [v >> 16n, v & 0xffffn]
  })
}

/** An IPv4 or IPv6 address as a number; null for anything else. A zone index (fe80::1%eth0) is ignored. */
export function parseIp(text: string): Ip | null {
  const ip = text.replace(/^\[|\]$/g, '').replace(/%.*$/, '')
  if (isIPv4(ip)) return { v6: false, value: v4Value(ip) }
  if (!isIPv6(ip)) return null
  const [head, tail] = ip.split('::') as [string, string | undefined]
  const h = v6Groups(head)
  const t = tail === undefined ? [] : v6Groups(tail)
  const groups = tail === undefined ? h : [...h, ...Array<bigint>(8 - h.length - t.length).fill(0n), ...t]
  return { v6: true, value: groups.reduce((acc, g) => (acc << 16n) | g, 0n) }
}

export function parseCidr(text: string): Cidr | null {
  const [addr, len, extra] = text.trim().split('/')
  const ip = addr ? parseIp(addr) : null
  if (!ip || extra !== undefined) return null
  const width = ip.v6 ? 128 : 32
  const bits = len === undefined ? width : Number(len)
  if (!/^\d+$/.test(len ?? String(width)) || bits > width) return null
  const shift = BigInt(width - bits)
  return { v6: ip.v6, base: (ip.value >> shift) << shift, bits }
}

export function inCidr(ip: Ip, cidr: Cidr): boolean {
  if (ip.v6 !== cidr.v6) return false
  const shift = BigInt((ip.v6 ? 128 : 32) - cidr.bits)
  return ip.value >> shift === cidr.base >> shift
}

const table = (rows: [string, AddressClass][]) => rows.map(([c, why]) => ({ cidr: parseCidr(c)!, why }))

// First match wins: the metadata hosts sit inside wider ranges and must be named as what they are.
const V4 = table([
  ['169.254.169.254/32', 'metadata'],
  ['100.100.100.200/32', 'metadata'],
  ['0.0.0.0/8', 'unspecified'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'cgnat'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'reserved'],
  ['192.0.2.0/24', 'documentation'],
  ['192.88.99.0/24', 'reserved'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'documentation'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved'],
])
const V6 = table([
  ['fd00:ec2::254/128', 'metadata'],
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['64:ff9b:1::/48', 'private'],
  ['2001::/23', 'reserved'],
  ['2001:db8::/32', 'documentation'],
  ['3fff::/20', 'documentation'],
  ['fc00::/7', 'unique-local'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'private'],
  ['ff00::/8', 'multicast'],
])
// IPv6 forms that carry an IPv4 address: the packet ends up at that IPv4 address, so it is what is judged.
const EMBEDS_V4_LOW = [parseCidr('::ffff:0:0/96')!, parseCidr('::ffff:0:0:0/96')!, parseCidr('64:ff9b::/96')!, parseCidr('::/96')!]
const SIX_TO_FOUR = parseCidr('2002::/16')!
const GLOBAL_UNICAST = parseCidr('2000::/3')!

/** The IPv4 address an IPv6 address stands for (mapped, translated, compatible, NAT64, 6to4), if any. */
export function embeddedV4(ip: Ip): Ip | null {
  if (!ip.v6) return null
  if (EMBEDS_V4_LOW.some((c) => inCidr(ip, c))) return { v6: false, value: ip.value & 0xffffffffn }
  if (inCidr(ip, SIX_TO_FOUR)) return { v6: false, value: (ip.value >> 80n) & 0xffffffffn }
  return null
}

/** Why an address must not be reached, or null for a public unicast address. */
export function classify(ip: Ip): AddressClass | null {
  const hit = (ip.v6 ? V6 : V4).find((r) => inCidr(ip, r.cidr))
  if (hit) return hit.why
  const v4 = embeddedV4(ip)
  if (v4) return classify(v4)
  return ip.v6 && !inCidr(ip, GLOBAL_UNICAST) ? 'reserved' : null
}
