import { expect, test } from 'bun:test'
import { join } from 'node:path'
import { auditActions, auditCatalogue, auditCatalogueMarkdown } from '../../api/audit/catalogue'

test("the README's audit action table is the one api/audit/catalogue.ts defines", async () => {
  const readme = await Bun.file(join(import.meta.dir, '..', '..', 'README.md')).text()
  expect(readme).toContain(auditCatalogueMarkdown())
})

test('every action is a dotted lower-case name with a summary', () => {
  expect(auditActions.length).toBeGreaterThan(40)
  for (const a of auditActions) {
    expect({ a, ok: /^[a-z_]+\.[a-z_]+$/.test(a) && auditCatalogue[a].summary.length > 10 }).toEqual({ a, ok: true })
  }
})
