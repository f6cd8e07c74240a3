import { expect, test } from 'bun:test'
import { useApi } from '../support/api'

const api = useApi()

// Deleting a referenced row reads the referencing table by the key's columns, to cascade or to check: without an
// index leading with them that is a whole-table read per deleted row, with the delete's locks held throughout
// (migrations/0029_foreign_key_indexes.sql). A tenant's deletion cascades through every one of them.
test('every foreign key has an index that leads with its columns', async () => {
  const missing = await api.sql<{ key: string }[]>`
    select c.conrelid::regclass::text || ' (' || c.conname || ')' as key
      from pg_constraint c
     where c.contype = 'f'
       and not exists (
         select 1 from pg_index i
          where i.indrelid = c.conrelid
            and (string_to_array(i.indkey::text, ' ')::int2[])[1:array_length(c.conkey, 1)] = c.conkey)
     order by 1`
  expect(missing.map((r) => r.key)).toEqual([])
})
