import { Resolver } from 'node:dns/promises'
import type { Config } from '../platform/config'

export type TxtLookup = { found: true; values: string[] } | { found: false; reason: 'no-record' | 'unresolvable' }

/** The TXT strings at `name`, each record's chunks joined (RFC 7208 style), from the configured servers. */
export async function lookupTxt(config: Pick<Config, 'DOMAIN_VERIFICATION_DNS_SERVERS'>, name: string): Promise<TxtLookup> {
  const resolver = new Resolver({ timeout: 3000, tries: 2 })
  if (config.DOMAIN_VERIFICATION_DNS_SERVERS.length > 0) resolver.setServers(config.DOMAIN_VERIFICATION_DNS_SERVERS)
  try {
    return { found: true, values: (await resolver.resolveTxt(name)).map((chunks) => chunks.join('')) }
  } catch (err) {
    const code = (err as { code?: string }).code
    return { found: false, reason: code === 'ENOTFOUND' || code === 'ENODATA' ? 'no-record' : 'unresolvable' }
  }
}
