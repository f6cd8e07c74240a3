// What "a new client" means for the new-sign-in notification: a user-agent family (browser or tool, and the
// operating system) on a network (an IPv4 /24, an IPv6 /48) that this account has not signed in from for 90 days. A
// version bump of the browser or a new address in the same office network is the same client; another browser, or
// the same browser from another network, is a new one.

export const KNOWN_CLIENT_DAYS = 90
/** How stale a known client's last sign-in may be recorded: a sign-in rewrites the row only when it is older than
 *  this, so a client unseen for KNOWN_CLIENT_DAYS may count as new up to a day early, never late. */
export const KNOWN_CLIENT_REFRESH_DAYS = 1

const BROWSERS: [RegExp, string][] = [
  [/\bEdg(e|A|iOS)?\//, 'Edge'],
  [/\bOPR\/|\bOpera\b/, 'Opera'],
  [/\bFirefox\/|\bFxiOS\//, 'Firefox'],
  [/\b(Headless)?Chrom(e|ium)\/|\bCriOS\//, 'Chrome'],
  [/\bSafari\//, 'Safari'],
]
const SYSTEMS: [RegExp, string][] = [
  [/\bAndroid\b/, 'Android'],
  [/\biPhone|iPad|iPod\b/, 'iOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bLinux\b/, 'Linux'],
]

/** "Firefox on Linux", "curl", "unknown client": a browser and its system, or the first product name of a tool. */
export function clientFamily(userAgent: string | null): string {
  const ua = userAgent?.slice(0, 512) ?? ''
  const browser = BROWSERS.find(([re]) => re.test(ua))?.[1]
  if (browser) {
    const system = SYSTEMS.find(([re]) => re.test(ua))?.[1]
    return system ? `${browser} on ${system}` : browser
  }
  const product = /^([A-Za-z][A-Za-z0-9._-]{0,39})/.exec(ua.trim())?.[1]
  return product ?? 'unknown client'
}

/** The address's network: 203.0.113.0/24, 2001:db8:1::/48; "unknown network" without an address. */
export function clientNetwork(ip: string | null): string {
  if (!ip) return 'unknown network'
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)?.[1]
  const v4 = mapped ?? (/^\d+\.\d+\.\d+\.\d+$/.test(ip) ? ip : null)
  if (v4) return `${v4.split('.').slice(0, 3).join('.')}.0/24`
  if (!ip.includes(':')) return 'unknown network'
  const [head = '', tail] = ip.toLowerCase().split('::')
  const left = head ? head.split(':') : []
  const right = tail === undefined ? [] : tail ? tail.split(':') : []
  const groups = [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right]
  return `${groups
    .slice(0, 3)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/48`
}

export const clientOf = (ctx: { userAgent: string | null; ip: string | null }) => {
  const client = clientFamily(ctx.userAgent)
  const network = clientNetwork(ctx.ip)
  return { client, network, key: `${client}|${network}` }
}
