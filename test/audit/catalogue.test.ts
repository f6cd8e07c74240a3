import { expect, test } from 'bun:test'
import { join } from 'node:path'
import { auditActions, auditCatalogue, auditCatalogueMarkdown } from '../../api/audit/catalogue'

test("docs/security.md's audit action table is the one api/audit/catalogue.ts defines", async () => {
  const doc = await Bun.file(join(import.meta.dir, '..', '..', 'docs', 'security.md')).text()
  expect(doc).toContain(auditCatalogueMarkdown())
})

test('every action is a dotted lower-case name with a summary', () => {
  expect(auditActions.length).toBeGreaterThan(40)
  for (const a of auditActions) {
    expect({ a, ok: /^[a-z_]+\.[a-z_]+$/.test(a) && auditCatalogue[a].summary.length > 10 }).toEqual({ a, ok: true })
  }
})
