import { expect, test } from 'bun:test'
import { join } from 'node:path'
import { permissionTableMarkdown } from '../../api/identity/permissions'

test('the README\'s role table is the one api/identity/permissions.ts defines', async () => {
  const readme = await Bun.file(join(import.meta.dir, '..', '..', 'README.md')).text()
  expect(readme).toContain(permissionTableMarkdown())
})
