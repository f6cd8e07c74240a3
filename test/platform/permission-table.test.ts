import { expect, test } from 'bun:test'
import { join } from 'node:path'
import { permissionCatalogueMarkdown, permissionTableMarkdown } from '../../api/identity/permissions'

test("docs/api.md's role table is the one api/identity/permissions.ts defines", async () => {
  const doc = await Bun.file(join(import.meta.dir, '..', '..', 'docs', 'api.md')).text()
  expect(doc).toContain(permissionTableMarkdown())
})

test("docs/api.md's permission catalogue (scope, requires) is the one api/identity/permissions.ts declares", async () => {
  const doc = await Bun.file(join(import.meta.dir, '..', '..', 'docs', 'api.md')).text()
  expect(doc).toContain(permissionCatalogueMarkdown())
})
