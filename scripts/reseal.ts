// `bun scripts/reseal.ts`: after a new key went in front of SECRET_KEY (docs/operations.md "Key rotation"), moves every sealed
// value to it and prints progress until done. It starts reseal/<current key id> on the keys task queue, or attaches
// to that run if one is under way; a worker with the same SECRET_KEY must be running. Exit 0 when every column is done.
import { Client, Connection, WorkflowIdConflictPolicy } from '@temporalio/client'
import { loadConfig, type Config } from '../api/platform/config'
import { deriveKeys } from '../api/platform/keyring'
import { SYSTEM_TENANT, taskQueues, TENANT_ID } from '../workflows/contract'
import { KeysWorkflowType, RESEAL_PROGRESS_QUERY, resealWorkflowId, type ResealCounts, type ResealProgress } from '../workflows/contract-keys'

export async function runReseal(
  config: Config,
  client: Client,
  opts: { batchSize?: number; onProgress?: (p: ResealProgress) => void } = {},
): Promise<Record<string, ResealCounts>> {
  const keys = deriveKeys(config.SECRET_KEY)
  const handle = await client.workflow.start(KeysWorkflowType.reseal, {
    workflowId: resealWorkflowId(keys.id),
    taskQueue: taskQueues(config).keys,
    args: [{ batchSize: opts.batchSize }],
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
    typedSearchAttributes: [{ key: TENANT_ID, value: SYSTEM_TENANT }],
  })
  const result = handle.result()
  let done = false
  result
    .finally(() => {
      done = true
    })
    .catch(() => {})
  while (!done) {
    await Promise.race([result.catch(() => {}), Bun.sleep(2000)])
    if (!done) opts.onProgress?.(await handle.query<ResealProgress>(RESEAL_PROGRESS_QUERY).catch(() => ({ column: null, totals: {}, done: false })))
  }
  return result
}

if (import.meta.main) {
  const config = loadConfig()
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS })
  try {
    const client = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE })
    const { id } = deriveKeys(config.SECRET_KEY)
    console.log(`re-sealing with key ${id} (workflow ${resealWorkflowId(id)})`)
    const totals = await runReseal(config, client, {
      onProgress: (p) => console.log(`  ${p.column ?? '…'}: ${JSON.stringify(p.column ? p.totals[p.column] : {})}`),
    })
    for (const [column, c] of Object.entries(totals))
      console.log(`  ${column.padEnd(40)} scanned ${c.scanned}, re-sealed ${c.resealed}, changed meanwhile ${c.changedMeanwhile}, unreadable ${c.unreadable}`)
    const unreadable = Object.values(totals).reduce((n, c) => n + c.unreadable, 0)
    if (unreadable > 0) {
      console.log(
        `done, but ${unreadable} value(s) were sealed with a key SECRET_KEY no longer lists: put that key back (behind the current one) and run again`,
      )
      process.exitCode = 1
    } else {
      console.log('done: every sealed value is under the current key; earlier keys may leave SECRET_KEY once their grace period ends')
    }
  } finally {
    await connection.close()
  }
}
