// The supervisor is a library: importing it must not change how the importing process exits; the entry point
// installs the handlers, and spawning before that is refused (a detached child would outlive a crash).
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'

const ROOT = join(import.meta.dir, '..', '..')
const run = (code: string) => {
  const r = Bun.spawnSync([process.execPath, '-e', code], { cwd: ROOT })
  return { out: r.stdout.toString().trim(), err: r.stderr.toString() }
}

/** Root holds CAP_SYS_NICE; the suite also runs as an ordinary user, for whom a negative niceness is refused. */
const mayRaisePriority = process.getuid?.() === 0

describe('scripts/platform', () => {
  test('importing it installs no exit or signal handler', () => {
    const { out } = run(
      `await import('./scripts/platform'); console.log(['exit', 'SIGINT', 'SIGTERM', 'SIGHUP'].map((e) => process.listenerCount(e)).join(' '))`,
    )
    expect(out).toBe('0 0 0 0')
  })

  test('spawnChild refuses until killChildrenOnExit() ran, then kills its children when the process exits', async () => {
    const { out } = run(`
      const p = await import('./scripts/platform')
      try { p.spawnChild('sleep', { cmd: ['sleep', '30'], pipe: true }); console.log('spawned') } catch { console.log('refused') }
      p.killChildrenOnExit()
      const child = p.spawnChild('sleep', { cmd: ['sleep', '30'], pipe: true })
      console.log(child.pid)
      process.exit(0)`)
    const [first, pid] = out.split('\n')
    expect(first).toBe('refused')
    // Gone, or a zombie nobody has reaped yet (orphans go to whatever reaps in this container): not running. The
    // SIGKILL is on its way when the parent exits, so give it a moment to land.
    const state = () =>
      Bun.file(`/proc/${pid}/stat`)
        .text()
        .then(
          (s) => s.slice(s.lastIndexOf(')') + 2, s.lastIndexOf(')') + 3),
          () => 'gone',
        )
    const deadline = Date.now() + 5000
    while (!['gone', 'Z'].includes(await state()) && Date.now() < deadline) await Bun.sleep(20)
    expect(['gone', 'Z']).toContain(await state())
  })

  test("setAutogroupNice weighs a child's own session, and refuses a child still in ours (it would weigh us too)", () => {
    const { out } = run(`
      const p = await import('./scripts/platform')
      const { readFileSync } = await import('node:fs')
      p.killChildrenOnExit()
      const group = (pid) => readFileSync('/proc/' + pid + '/autogroup', 'utf8').trim()
      const ours = group('self')
      const own = p.spawnChild('sleep', { cmd: ['sleep', '30'], pipe: true })
      const shared = Bun.spawn(['sleep', '30'])
      const refusal = p.setAutogroupNice(shared.pid, -10)
      const set = p.setAutogroupNice(own.pid, -10)
      console.log(JSON.stringify({ refusal, set, child: group(own.pid), shared: group(shared.pid), ours, oursAfter: group('self') }))
      shared.kill()
      process.exit(0)`)
    const r = JSON.parse(out)
    expect(r.child.split(' ')[0]).not.toBe(r.ours.split(' ')[0])
    if (mayRaisePriority) {
      expect(r.set).toBeNull()
      expect(r.child).toEndWith('nice -10')
    } else {
      // a negative niceness needs CAP_SYS_NICE: refused, said, and nothing changed
      expect(r.set).toMatch(/EPERM|EACCES|not permitted|denied/i)
      expect(r.child).toEndWith('nice 0')
    }
    expect(r.refusal).toContain('in our own session')
    expect(r.shared).toBe(r.ours)
    expect(r.oursAfter).toBe(r.ours)
  })
})
