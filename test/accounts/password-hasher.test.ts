import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { getPriority } from 'node:os'
import { ARGON2, HASHER_ALLOCATOR, HASHER_NICE, PasswordHasher } from '../../api/identity/password-hasher'
import { hashPassword, setPasswordHashCost, verifyPassword } from '../../api/identity/passwords'
import { loadConfig } from '../../api/platform/config'

const statOf = (pid: number) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
/** The session a process belongs to (the kernel's autogroup follows it). */
const sessionOf = (pid: number) => Number(statOf(pid)[3])

/** This process's children running the hasher. */
function hasherChildren(): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .map(Number)
    .filter((pid) => {
      try {
        const ppid = Number(statOf(pid)[1])
        return ppid === process.pid && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('password-hasher-process')
      } catch {
        return false // gone meanwhile
      }
    })
}

describe('password hashing', () => {
  test('argon2id runs in a child process of its own session, below the API in CPU priority, and answers like Bun.password', async () => {
    // The process's cost is what its last API was composed with (the runner's cheap one in the suite): set it here.
    setPasswordHashCost(ARGON2)
    const hash = await hashPassword('correct horse battery staple')
    expect(hash).toStartWith('$argon2id$v=19$m=19456,t=2,p=1$')
    expect(await Bun.password.verify('correct horse battery staple', hash)).toBe(true)
    expect(await verifyPassword('correct horse battery staple', hash)).toBe(true)
    expect(await verifyPassword('correct horse battery stapler', hash)).toBe(false)
    expect(await verifyPassword('anything', null)).toBe(false) // the unknown account's dummy check
    await expect(verifyPassword('anything', 'not a hash')).rejects.toThrow('UnsupportedAlgorithm')

    const children = hasherChildren()
    expect(children).toHaveLength(1)
    expect(getPriority(children[0]!)).toBe(getPriority(process.pid) + HASHER_NICE)
    // Its own session, hence its own autogroup: the kernel charges its hashing to it, not to the API's share.
    expect(sessionOf(children[0]!)).toBe(children[0]!)
    expect(sessionOf(children[0]!)).not.toBe(sessionOf(process.pid))
    // None of the API's settings, so none of its secrets, in the child's environment.
    expect(process.env.SECRET_KEY).toBeDefined()
    const environ = readFileSync(`/proc/${children[0]}/environ`, 'utf8')
      .split('\0')
      .map((kv) => kv.split('=')[0])
    expect(environ.filter((k) => k && k !== 'PATH' && !(k in HASHER_ALLOCATOR))).toEqual([])
  })

  test('new hashes take the configured cost, verifications the cost of the hash they check; only a test deployment may go below OWASP', async () => {
    const env = { ...process.env, PASSWORD_HASH_MEMORY_KIB: undefined, PASSWORD_HASH_ITERATIONS: undefined }
    const production = loadConfig({ ...env, NODE_ENV: 'production' })
    expect([production.PASSWORD_HASH_MEMORY_KIB, production.PASSWORD_HASH_ITERATIONS]).toEqual([ARGON2.memoryCost, ARGON2.timeCost])
    for (const weaker of [{ PASSWORD_HASH_MEMORY_KIB: '19455' }, { PASSWORD_HASH_ITERATIONS: '1' }]) {
      for (const NODE_ENV of ['production', 'development']) {
        expect(() => loadConfig({ ...env, NODE_ENV, ...weaker })).toThrow(/only with NODE_ENV=test/)
      }
      expect(() => loadConfig({ ...env, NODE_ENV: 'test', ...weaker })).not.toThrow()
    }
    expect(loadConfig({ ...env, NODE_ENV: 'production', PASSWORD_HASH_MEMORY_KIB: '65536', PASSWORD_HASH_ITERATIONS: '3' }).PASSWORD_HASH_MEMORY_KIB).toBe(
      65536,
    )

    setPasswordHashCost(ARGON2)
    const strong = await hashPassword('correct horse battery staple')
    setPasswordHashCost({ memoryCost: 1024, timeCost: 1 })
    try {
      const cheap = await hashPassword('correct horse battery staple')
      expect(cheap).toStartWith('$argon2id$v=19$m=1024,t=1,p=1$')
      // A hash made at another cost still verifies: each carries its own parameters.
      expect(await verifyPassword('correct horse battery staple', strong)).toBe(true)
      expect(await verifyPassword('correct horse battery staple', cheap)).toBe(true)
    } finally {
      setPasswordHashCost(ARGON2)
    }
  })

  test('after an idle second, a verification reuses the memory of the one before: it faults in none of its 19 MiB', async () => {
    // Page faults of one verification after `idleMs` without hashing, in a process whose allocator has its settings.
    const faultsAfterIdle = async (verify: () => Promise<unknown>, pid: number, idleMs: number) => {
      await verify()
      await Bun.sleep(idleMs)
      const before = Number(statOf(pid)[7]) // minflt
      await verify()
      return Number(statOf(pid)[7]) - before
    }
    const pages = (ARGON2.memoryCost * 1024) / 4096 // 4,864
    const idleMs = 1000 // ten times the allocator's default delay before it hands freed memory back

    // The control: Bun's defaults, as bare argon2id runs. The idle second is long enough to lose the memory here.
    const script = `
      const hash = await Bun.password.hash('pw', ${JSON.stringify(ARGON2)})
      const minflt = () => Number(require('node:fs').readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')[7])
      await Bun.password.verify('pw', hash)
      await Bun.sleep(${idleMs})
      const before = minflt()
      await Bun.password.verify('pw', hash)
      console.log(minflt() - before)`
    const control = Bun.spawn([process.execPath, '-e', script], { stdout: 'pipe', env: { PATH: process.env.PATH ?? '' } })
    const controlFaults = Number((await new Response(control.stdout).text()).trim())
    expect(await control.exited).toBe(0)
    expect(controlFaults).toBeGreaterThan(pages * 0.9)

    const before = hasherChildren()
    const hasher = new PasswordHasher()
    try {
      const hash = await hasher.hash('correct horse battery staple')
      const [child] = hasherChildren().filter((pid) => !before.includes(pid))
      const faults = await faultsAfterIdle(() => hasher.verify('correct horse battery staple', hash), child!, idleMs)
      expect(faults).toBeLessThan(pages * 0.1)
    } finally {
      hasher.stop()
    }
  }, 60_000)

  test('while a hash is out the event loop sleeps, and an idle child does not keep its process alive', async () => {
    const hasher = new PasswordHasher()
    try {
      const hash = await hasher.hash('correct horse battery staple')
      const cpu = () => {
        const u = process.cpuUsage()
        return u.user + u.system
      }
      const cpu0 = cpu()
      const t0 = performance.now()
      let verified = 0
      while (verified < 10 || performance.now() - t0 < 1000) {
        expect(await hasher.verify('correct horse battery staple', hash)).toBe(true)
        verified++
      }
      // The hashing is the child's: this process only writes jobs and reads answers. Unref'd with a job in flight,
      // its main thread spun for the whole time (a ratio of 1).
      const busy = (cpu() - cpu0) / 1000 / (performance.now() - t0)
      expect(busy).toBeLessThan(0.3)
    } finally {
      hasher.stop()
    }

    const script = "import { hashPassword } from './api/identity/passwords'; await hashPassword('x'); console.log('hashed')"
    const proc = Bun.spawn([process.execPath, '-e', script], { cwd: `${import.meta.dir}/../..`, stdout: 'pipe', env: { PATH: process.env.PATH ?? '' } })
    const ended = await Promise.race([proc.exited, Bun.sleep(30_000).then(() => 'still running')])
    proc.kill()
    expect(ended).toBe(0)
    expect(await new Response(proc.stdout).text()).toBe('hashed\n')
  }, 60_000)

  test('a job whose child dies is answered by a fresh child; a job that kills two is refused', async () => {
    const hasher = new PasswordHasher()
    try {
      const hash = await hasher.hash('correct horse battery staple')
      const before = hasherChildren()
      const verifying = Promise.all(Array.from({ length: 4 }, () => hasher.verify('correct horse battery staple', hash)))
      for (const pid of before) process.kill(pid, 'SIGKILL')
      expect(await verifying).toEqual([true, true, true, true])
      expect(hasherChildren().filter((pid) => !before.includes(pid)).length).toBeGreaterThan(0)

      // Killed again and again: the job is refused after its second child, not sent round for ever. Its hash asks for
      // far more argon2id work than ours (about a second), so no child can answer it between two kills.
      const slow = await Bun.password.hash('correct horse battery staple', { algorithm: 'argon2id', memoryCost: 65536, timeCost: 30 })
      const doomed = hasher.verify('correct horse battery staple', slow)
      let settled = false
      void doomed
        .catch(() => {})
        .finally(() => {
          settled = true
        })
      while (!settled) {
        for (const pid of hasherChildren()) process.kill(pid, 'SIGKILL')
        await Bun.sleep(2)
      }
      await expect(doomed).rejects.toThrow('password hasher exited')
    } finally {
      hasher.stop()
    }
  })

  test('stopping refuses what is still pending, and what comes after', async () => {
    const hasher = new PasswordHasher()
    const hash = await hasher.hash('correct horse battery staple')
    const pending = hasher.verify('correct horse battery staple', hash)
    hasher.stop()
    await expect(pending).rejects.toThrow('password hasher stopped')
    await expect(hasher.hash('another')).rejects.toThrow('password hasher stopped')
  })
})
