// What an offboarding export is, in the tenant's export bucket under `offboarding/<requestId>/`:
//   rows.ndjson.gz     every row of the tenant, one `{"table": …, "row": {…}}` a line, table by table, all in one
//                      snapshot; a row as Postgres writes it in JSON (row_to_json: timestamps in UTC with microseconds,
//                      numbers as numbers, json columns as JSON), bytes as hex (activities/tenant-export-queries.ts)
//   objects.ndjson.gz  every object of its buckets, one `{"bucket", "key", "size", "sha256"}` a line
//   manifest.dsse.json a DSSE envelope (signed with the edge-package key, api/edge-packages/signing.ts) of the manifest:
//                      the two files' SHA-256, sizes and counts, the rows per table, and the audit chain's head.
// Secrets are left out of the rows: a column whose name says it holds one (sealed, secret, token, password, verifier,
// code or state hashes) is not exported; everything else is.

export const TENANT_EXPORT_PAYLOAD_TYPE = 'application/vnd.rcp.tenant-export+json'

export const exportPrefix = (requestId: string) => `offboarding/${requestId}/`

export const exportObjectKeys = (prefix: string) => ({
  rows: `${prefix}rows.ndjson.gz`,
  objects: `${prefix}objects.ndjson.gz`,
  manifest: `${prefix}manifest.dsse.json`,
})

const SECRET_COLUMN = /sealed|secret|token|password|verifier|^code_hash$|^state_hash$/

export const exportedColumns = (columns: readonly string[]): string[] => columns.filter((c) => !SECRET_COLUMN.test(c))

export interface ExportFileSummary {
  key: string
  bytes: number
  sha256: string
  count: number
}

export interface TenantExportManifest {
  type: 'rcp.tenant-export/v1'
  tenantId: string
  requestId: string
  createdAt: string
  tables: { table: string; rows: number; columnsLeftOut: string[] }[]
  rows: ExportFileSummary
  objects: ExportFileSummary & { buckets: string[] }
  auditChainHead: { seq: number; hash: string | null }
}
