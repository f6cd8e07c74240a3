// Headless Debian Chromium for the browser tests, driven by playwright-core. Installed on first use when missing
// (apt-get, as root: about 20 s).
import { existsSync } from 'node:fs'
import { chromium, type Browser } from 'playwright-core'

export const CHROMIUM = '/usr/bin/chromium'
const FLAGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync',
]

async function aptGet(...args: string[]): Promise<boolean> {
  const proc = Bun.spawn(['apt-get', ...args], { stdout: 'ignore', stderr: 'pipe', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } })
  return (await proc.exited) === 0
}

export async function ensureChromium(): Promise<void> {
  if (existsSync(CHROMIUM)) return
  if (process.getuid?.() !== 0) throw new Error(`${CHROMIUM} is missing: install it with "apt-get install -y chromium" (needs root)`)
  if (!(await aptGet('install', '-y', 'chromium'))) {
    await aptGet('update')
    if (!(await aptGet('install', '-y', 'chromium'))) throw new Error('apt-get install -y chromium failed')
  }
}

export async function launchChromium(): Promise<Browser> {
  await ensureChromium()
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS })
}
