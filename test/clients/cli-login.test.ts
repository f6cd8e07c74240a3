// `rcp login` with the device flow, end to end, as a person runs it: the compiled binary is spawned in a terminal-like
// way (a scratch HOME and XDG_CONFIG_HOME, its output read as it comes), the link it prints is opened in Chromium by a
// signed-in member of a tenant, who approves (or denies) on the console's device page. The API's 5 s poll interval is
// left as it is, so each case waits one or two polls.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DENIED_MESSAGE } from '../../clients/cli/device-login'
import { tenantOwner } from '../support/fixtures'
import { memberOf } from '../tenancy/members'
import { expectClean, guardedPage, signInAs, useConsole } from '../console/browser'

const env = useConsole()
const ROOT = join(import.meta.dir, '..', '..')
const EXIT = { ok: 0, failed: 1, auth: 3 }
const dir = mkdtempSync(join(process.env.RCP_TEST_DATA_DIR ?? tmpdir(), 'rcp-login-'))
const bin = join(dir, 'rcp')

beforeAll(async () => {
  const built = Bun.spawn([process.execPath, 'build', '--compile', 'clients/cli/main.ts', '--outfile', bin], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
  const [code, stderr] = await Promise.all([built.exited, new Response(built.stderr).text()])
  if (code !== 0) throw new Error(`bun build --compile failed: ${stderr}`)
}, 180_000)
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** rcp running in its own HOME, its stdout and stderr collected as they arrive. */
function spawnRcp(args: string[], home: string) {
  const proc = Bun.spawn([bin, ...args], {
    cwd: home,
    env: { PATH: process.env.PATH!, HOME: home, XDG_CONFIG_HOME: join(home, 'config') },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const seen = { stdout: '', stderr: '' }
  const pump = async (stream: ReadableStream<Uint8Array>, into: 'stdout' | 'stderr') => {
    const decoder = new TextDecoder()
    const reader = stream.getReader()
    for (let r = await reader.read(); !r.done; r = await reader.read()) seen[into] += decoder.decode(r.value, { stream: true })
  }
  const drained = Promise.all([pump(proc.stdout, 'stdout'), pump(proc.stderr, 'stderr')])
  return {
    seen,
    /** The link rcp tells the person to open, once it has printed all it says before waiting. */
    async link(): Promise<string> {
      for (;;) {
        const found = /open (https?:\/\/\S+)/.exec(seen.stderr)
        if (found && seen.stderr.includes('Waiting for approval')) return found[1]!
        if (proc.exitCode !== null) throw new Error(`rcp exited ${proc.exitCode} before printing a link: ${seen.stderr}`)
        await Bun.sleep(50)
      }
    },
    async exited() {
      const code = await proc.exited
      await drained
      return { code, ...seen }
    },
  }
}

async function decideInConsole(email: string, link: string, tenantId: string, decision: 'Approve' | 'Deny') {
  const g = await guardedPage(env.browser, env.origin)
  try {
    await signInAs(g, env.origin, email)
    await g.page.goto(link)
    await g.page.getByRole('heading', { name: 'Sign in a device' }).waitFor()
    await g.page.getByRole('button', { name: 'Continue' }).click()
    await g.page.getByRole('heading', { name: 'A device asks to act as you' }).waitFor()
    expect(await g.page.locator('#device-client').textContent()).toBe('rcp on the test host')
    if (decision === 'Approve') await g.page.getByLabel('Tenant').selectOption(tenantId)
    await g.page.getByRole('button', { name: decision }).click()
    await g.page.getByRole('heading', { name: decision === 'Approve' ? 'Device approved' : 'Device denied' }).waitFor()
    expectClean(g)
  } finally {
    await g.close()
  }
}

const LOGIN = (scopes: string) => ['login', '--api', env.api.url, '--scopes', scopes, '--name', 'rcp on the test host']

describe('rcp login: the device flow with the approval in the console', () => {
  test('approved by a member: exit 0, the token stored 0600 and never printed; whoami shows exactly the approved scopes', async () => {
    const owner = await tenantOwner(env.api.url)
    const member = await memberOf(env.api.url, env.api.sql, owner.tenantId, 'researcher')
    const home = mkdtempSync(join(dir, 'home-'))
    const login = spawnRcp(LOGIN('tenant:read,model:read'), home)
    const link = await login.link()
    expect(new URL(link).origin).toBe(env.origin)
    const userCode = /the code ([A-Z]{4}-[A-Z]{4})/.exec(login.seen.stderr)?.[1]
    expect(userCode).toBeDefined()
    expect(new URL(link).searchParams.get('user_code')).toBe(userCode!)

    await decideInConsole(member.email, link, owner.tenantId, 'Approve')
    const done = await login.exited()
    expect({ code: done.code, stderr: done.code === 0 ? '' : done.stderr }).toEqual({ code: EXIT.ok, stderr: '' })
    const slug = (await owner.client.get('/users/me')).json.data.currentMembership.tenantSlug as string
    expect(done.stdout).toContain(`Signed in to ${slug} (personal_access_token`)

    const file = join(home, 'config', 'rcp', 'config.json')
    expect(statSync(join(home, 'config', 'rcp')).mode & 0o777).toBe(0o700)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    const token = JSON.parse(readFileSync(file, 'utf8')).credentials[0].token as string
    expect(token).toMatch(/^rcp_pat_/)
    expect(`${done.stdout}${done.stderr}`).not.toContain(token)

    const who = await spawnRcp(['whoami', '--json'], home).exited()
    expect(who.code).toBe(EXIT.ok)
    expect(JSON.parse(who.stdout)).toMatchObject({
      user: { email: member.email },
      tenant: { id: owner.tenantId, role: 'researcher' },
      credentialClass: 'personal_access_token',
      permissions: ['tenant:read', 'model:read'],
    })
    const human = await spawnRcp(['whoami'], home).exited()
    expect(human.stdout).toMatch(/^permissions\s+tenant:read model:read$/m)
    expect(`${who.stdout}${who.stderr}${human.stdout}${human.stderr}`).not.toContain(token)
  }, 120_000)

  test('denied in the console: exit 3 with the documented message, and nothing stored', async () => {
    const owner = await tenantOwner(env.api.url)
    const home = mkdtempSync(join(dir, 'home-'))
    const login = spawnRcp(LOGIN('tenant:read'), home)
    await decideInConsole(owner.email, await login.link(), owner.tenantId, 'Deny')
    const done = await login.exited()
    expect(done.code).toBe(EXIT.auth)
    expect(done.stderr).toContain(`rcp: ${DENIED_MESSAGE}\n`)
    expect(done.stdout).toBe('')
    expect(existsSync(join(home, 'config', 'rcp', 'config.json'))).toBe(false)
  }, 120_000)

  test('a scope the API does not know: its validation error, exit 1, before any code is shown', async () => {
    const home = mkdtempSync(join(dir, 'home-'))
    const done = await spawnRcp(LOGIN('tenant:read,robots:fly'), home).exited()
    expect(done.code).toBe(EXIT.failed)
    expect(done.stderr).toContain('VALIDATION_ERROR (400)')
    expect(done.stderr).not.toContain('open http')
  }, 60_000)
})
