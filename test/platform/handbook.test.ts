// The operator's handbook (docs/operations.md "Operator's handbook") is a promise: its workflow table is the code's, and its
// commands, run as written with the Temporal CLI the platform uses, find a tenant's jobs.
import { describe, expect, test } from 'bun:test'
import * as allWorkflows from '../../workflows'
import { auditExportWorkflowId } from '../../workflows/contract-audit'
import { edgePackageWorkflowId } from '../../workflows/contract-edge-packages'
import { resealWorkflowId } from '../../workflows/contract-keys'
import { mailWorkflowId } from '../../workflows/contract-mail'
import { modelsWorkflowIds } from '../../workflows/contract-models'
import { storageWorkflowIds } from '../../workflows/contract-storage'
import { webhookWorkflowIds } from '../../workflows/contract-webhooks'
import { taskQueueTable } from '../../worker/queues'
import { serverBinaries } from '../../scripts/servers/binaries'
import { provisionedTenant } from '../storage/helpers'
import { useApi } from '../support/api'

const api = useApi()
const readme = await Bun.file(new URL('../../docs/operations.md', import.meta.url)).text()
const handbook = readme.slice(readme.indexOf("## Operator's handbook"), readme.indexOf('\n## ', readme.indexOf("## Operator's handbook") + 1))
const rows = handbook
  .split('\n')
  .filter((l) => /^\| `\w+Workflow` \|/.test(l))
  .map((l) => l.split(' | ').map((c) => c.replace(/^\| /, '').trim()))

/** Each workflow's id as the code builds it from the table's placeholders. */
const IDS: Record<string, string> = {
  provisionStorageWorkflow: storageWorkflowIds.provision('<tenantId>'),
  reconcileStorageWorkflow: storageWorkflowIds.reconcile('<tenantId>', '<jobId>'),
  validateModelVersionWorkflow: modelsWorkflowIds.validation('<tenantId>', '<modelVersionId>'),
  buildEdgePackageWorkflow: edgePackageWorkflowId('<tenantId>', '<packageId>', '<targetArch>'),
  deliverWebhookWorkflow: webhookWorkflowIds.delivery({ endpointId: '<endpointId>', eventType: '<eventType>', eventId: '<eventId>' }),
  sendMailWorkflow: mailWorkflowId('<outboxId>'),
  exportAuditLogWorkflow: auditExportWorkflowId('<tenantId>', '<exportId>'),
  resealSecretsWorkflow: resealWorkflowId('<current key id>'),
}

describe("the operator's handbook", () => {
  test('its workflow table names every workflow once, with the id the code builds and the queue that runs it', async () => {
    expect(rows.map((r) => r[0]!.replaceAll('`', '')).sort()).toEqual(Object.keys(allWorkflows).sort())
    for (const [name, id, queue] of rows) {
      const workflow = name!.replaceAll('`', '')
      if (IDS[workflow]) expect({ workflow, id: id!.split('`')[1] }).toEqual({ workflow, id: IDS[workflow] })
      const module = taskQueueTable.find((q) => q.queue === queue)
      expect({ workflow, queue, runs: module ? Object.keys(await import(module.workflowsPath)).includes(workflow) : false }).toEqual({
        workflow,
        queue,
        runs: true,
      })
    }
  })

  test("its commands find a tenant's jobs and describe one", async () => {
    const tenant = await provisionedTenant(api.url)
    const { temporal } = await serverBinaries()
    const commands = [...handbook.matchAll(/^temporal workflow (list|describe) .*$/gm)].map((m) => m[0])
    expect(commands).toHaveLength(3)
    const workflowId = storageWorkflowIds.provision(tenant.tenantId)
    for (const line of commands) {
      const args = line
        .replace('<tenantId>', tenant.tenantId)
        .replace('<workflowId>', workflowId)
        .split(/ (?=(?:[^"]*"[^"]*")*[^"]*$)/)
        .slice(1)
        .map((a) => a.replace(/^"|"$/g, ''))
      const run = Bun.spawnSync([temporal, ...args, '--address', process.env.TEMPORAL_ADDRESS!, '--namespace', process.env.TEMPORAL_NAMESPACE ?? 'default'])
      expect({ line, exit: run.exitCode, err: run.stderr.toString() }).toEqual({ line, exit: 0, err: '' })
      const out = run.stdout.toString()
      // The running-only list may or may not still hold the provisioning run; the others must name it.
      if (!line.includes('Running')) expect(out).toContain(workflowId)
    }
  })
})
