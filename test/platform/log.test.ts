import { describe, expect, test } from 'bun:test'
import { pathOf } from '../../api/http/access-log'
import { createLogger, stdoutLines } from '../../api/platform/log'

describe('structured logs', () => {
  test('one JSON object a line; secrets under any nesting are redacted', () => {
    const lines: string[] = []
    const log = createLogger('info', { service: 't' }, (l) => lines.push(l)).child({ requestId: 'r1' })
    log.info('hello', {
      body: { email: 'a@b.c', password: 'hunter2', nested: [{ token: 'rcp_pat_x' }] },
      authorization: 'Bearer y',
      totpSecret: 'S',
      recoveryCodes: ['c'],
    })
    log.debug('hidden')
    expect(lines.length).toBe(1)
    const rec = JSON.parse(lines[0]!)
    expect(rec).toMatchObject({ level: 'info', msg: 'hello', service: 't', requestId: 'r1' })
    expect(rec.body.email).toBe('a@b.c')
    for (const secret of ['hunter2', 'rcp_pat_x', 'Bearer y', '"S"', '["c"]']) expect(lines[0]).not.toContain(secret)
  })
})

describe('the access log line', () => {
  test("names the request's path without its query, as sent", () => {
    expect(pathOf('http://127.0.0.1:3000/v1/tokens/self')).toBe('/v1/tokens/self')
    expect(pathOf('http://api.example.com/v1/tenants/current/audit-log?from=2026-01-01&to=2026-01-02')).toBe('/v1/tenants/current/audit-log')
    expect(pathOf('https://[::1]:8443/?q=/x')).toBe('/')
    expect(pathOf('http://h')).toBe('/')
  })

  test('a key once judged secret stays redacted, and so does every key after the verdicts are full', () => {
    const lines: string[] = []
    const log = createLogger('info', {}, (l) => lines.push(l))
    for (let i = 0; i < 1100; i++) log.info('x', { [`field${i}`]: 1 })
    log.info('y', { password: 'hunter2', field1: 'plain', sessionToken: 'rcp_ses_z' })
    expect(lines.at(-1)).not.toContain('hunter2')
    expect(lines.at(-1)).not.toContain('rcp_ses_z')
    expect(JSON.parse(lines.at(-1)!).field1).toBe('plain')
  })
})

describe('standard output, a batch at a time', () => {
  test('the lines of one event loop turn go out in one write, in order, on the next turn', async () => {
    const writes: string[] = []
    const real = process.stdout.write
    process.stdout.write = ((chunk: string) => {
      writes.push(chunk)
      return true
    }) as typeof process.stdout.write
    try {
      const write = stdoutLines()
      write('{"n":1}')
      write('{"n":2}')
      write('{"n":3}')
      expect(writes).toEqual([])
      await new Promise((r) => setImmediate(r))
      write('{"n":4}')
      await new Promise((r) => setImmediate(r))
    } finally {
      process.stdout.write = real
    }
    expect(writes).toEqual(['{"n":1}\n{"n":2}\n{"n":3}\n', '{"n":4}\n'])
  })

  test('lines still held when the process exits are written on its way out', async () => {
    // A process that logs and exits in the same turn: without the exit flush its lines would be lost.
    const child = Bun.spawn(
      [
        process.execPath,
        '-e',
        [
          `const { createLogger } = await import(${JSON.stringify(`${import.meta.dir}/../../api/platform/log.ts`)})`,
          "const log = createLogger('info', { service: 'exit-test' })",
          "for (let i = 0; i < 3; i++) log.info('line', { i })",
          'process.exit(3)',
        ].join('\n'),
      ],
      { stdout: 'pipe', stderr: 'pipe' },
    )
    const [out, code] = await Promise.all([new Response(child.stdout).text(), child.exited])
    expect(code).toBe(3)
    expect(
      out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).i),
    ).toEqual([0, 1, 2])
  })
})
