// What the outbound guard lets through beyond public addresses, and whom it trusts for TLS. Built once per
// configuration; tests build their own with an injected resolver.
import { lookup } from 'node:dns/promises'
import { readFileSync } from 'node:fs'
import { rootCertificates } from 'node:tls'
import type { Config } from '../config'
import { parseCidr, type Cidr } from './addresses'

export interface ResolvedAddress {
  address: string
  family: 4 | 6
}

/** Every address a hostname resolves to; the guard checks each and connects only to those. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>

export interface OutboundPolicy {
  /** Hostnames (exact, lower case) whose addresses may be private; development and tests only. */
  allowHosts: ReadonlySet<string>
  /** Refused ranges that are let through anyway (a loopback provider in tests). */
  allowCidrs: readonly Cidr[]
  /** Trusted roots for https: the system's plus OUTBOUND_CA_FILE; undefined when that is unset. */
  ca?: string[]
  resolve: Resolver
}

export const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }))

type OutboundConfig = Pick<Config, 'OUTBOUND_ALLOW_HOSTS' | 'OUTBOUND_ALLOW_PRIVATE_CIDRS' | 'OUTBOUND_CA_FILE'>

export function outboundPolicy(config: OutboundConfig, overrides: Partial<OutboundPolicy> = {}): OutboundPolicy {
  return {
    allowHosts: new Set(config.OUTBOUND_ALLOW_HOSTS.map((h) => h.toLowerCase())),
    allowCidrs: config.OUTBOUND_ALLOW_PRIVATE_CIDRS.map((c) => parseCidr(c)!),
    // Node's `ca` replaces the default roots, so the extra bundle is added to them rather than set alone.
    ca: config.OUTBOUND_CA_FILE ? [...rootCertificates, readFileSync(config.OUTBOUND_CA_FILE, 'utf8')] : undefined,
    resolve: systemResolver,
    ...overrides,
  }
}

const perConfig = new WeakMap<object, OutboundPolicy>()

/** The policy of a process's configuration, read (CA file included) once. */
export function outboundPolicyOf(config: OutboundConfig): OutboundPolicy {
  let policy = perConfig.get(config)
  if (!policy) perConfig.set(config, (policy = outboundPolicy(config)))
  return policy
}
