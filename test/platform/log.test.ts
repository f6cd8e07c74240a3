import { describe, expect, test } from 'bun:test'
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
