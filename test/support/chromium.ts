// Debian's Chromium headless shell for the browser tests, driven by playwright-core: the browser Playwright itself
// runs for headless work, without the full browser's UI layers, at half the full browser's CPU for the same console
// tests (docs/testing.md). Installed on first use when missing (apt-get, as root: about 20 s).
import { existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type Browser } from 'playwright-core'

export const CHROMIUM = '/usr/bin/chromium-headless-shell'
const PACKAGE = 'chromium-headless-shell'
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

/** apt-get, waiting for dpkg's lock rather than failing on it (other processes on the machine may be installing). */
const APT = 'apt-get -o DPkg::Lock::Timeout=600'

export async function ensureChromium(): Promise<void> {
  if (existsSync(CHROMIUM)) return
  if (process.getuid?.() !== 0) throw new Error(`${CHROMIUM} is missing: install it with "apt-get install -y ${PACKAGE}" (needs root)`)
  // Test files run in parallel and several may find Chromium missing at once: one installs under an exclusive lock
  // (flock, util-linux), the others wait for it and find Chromium there. Without package lists, update first.
  const install = `test -x ${CHROMIUM} || ${APT} install -y ${PACKAGE} || { ${APT} update && ${APT} install -y ${PACKAGE}; }`
  const proc = Bun.spawn(['flock', join(tmpdir(), 'rcp-chromium-install.lock'), 'sh', '-c', install], {
    stdout: 'ignore',
    stderr: 'pipe',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  })
  const [code, err] = await Promise.all([proc.exited, new Response(proc.stderr).text()])
  if (code !== 0) throw new Error(`apt-get install -y ${PACKAGE} failed:\n${err.slice(-2000)}`)
}

export async function launchChromium(): Promise<Browser> {
  await ensureChromium()
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS })
}

let shared: Promise<Browser> | undefined

/** One Chromium for every browser file a bun test process runs: the runner's workers take their files one after
 *  another in one global (`--no-isolate`), and a launch costs about a second and 0.4 CPU-seconds. Each file works in
 *  contexts of its own (cookies, storage and permissions are per context) and closes them with `releaseChromium`; a
 *  browser that crashed or was closed is launched again. Playwright kills it when the process exits. */
export async function sharedChromium(): Promise<Browser> {
  const browser = await shared?.catch(() => undefined)
  if (browser?.isConnected()) return browser
  shared = launchChromium()
  return shared
}

/** Closes every context of the shared browser, which are the ones the finishing file opened (files run one at a
 *  time in a process), and leaves the browser to the next file. */
export async function releaseChromium(browser: Browser | undefined): Promise<void> {
  if (browser?.isConnected()) await Promise.all(browser.contexts().map((c) => c.close()))
}
