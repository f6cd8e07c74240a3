import { describe, expect, test } from 'bun:test'
import { pathOf } from '../../api/http/access-log'
import { createLogger } from '../../api/platform/log'

describe('structured logs', () => {
  test('one JSON object a line; secrets under any nesting are redacted', () => {
    const lines: string[] = []
    const log = createLogger('info', { service: 't' }, (l) => lines.push(l)).child({ requestId: 'r1' })
    log.info('hello', { body: { email: 'a@b.c', password: 'hunter2', nested: [{ token: 'rcp_pat_x' }] }, authorization: 'Bearer y', totpSecret: 'S', recoveryCodes: ['c'] })
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
