import { Elysia } from 'elysia'
import type { AppDeps } from '../http/deps'
import { envelope, listEnvelope, ok, page } from '../http/envelope'
import { httpConventions } from '../http/plugin'
import { AuditEntryDto, AuditTimeRangeBodyDto, AuditVerificationDto, ListAuditLogQuery, SecurityActivityQuery } from './model'
import { listSecurityActivity, listTenantAuditLog, verifyTenantAuditLog } from './service'

/** The audit trail's readers. Nothing here writes an entry or can alter one: entries are written only by the
 *  changes they describe (recordAudit), and the table refuses UPDATE and DELETE. */
export const auditRoutes = (deps: AppDeps) =>
  new Elysia({ tags: ['Audit log'] })
    .use(httpConventions(deps))
    .get('/tenants/current/audit-log', async ({ request, ctx, query }) => page(request, await listTenantAuditLog(deps, ctx, query)), {
      auth: 'tenant:manage', errors: ['T400p'], query: ListAuditLogQuery, response: { 200: listEnvelope(AuditEntryDto) },
      detail: { summary: "The current tenant's audit trail in a window (from and to required), newest first, filtered by actor, action prefix, target and outcome" },
    })
    .post('/tenants/current/audit-log/verifications', async ({ request, ctx, body }) => ok(request, await verifyTenantAuditLog(deps, ctx, body)), {
      auth: 'tenant:manage', errors: ['T400'], body: AuditTimeRangeBodyDto, response: { 200: envelope(AuditVerificationDto) },
      detail: { summary: "Recompute the tenant's hash chain over a window: how many entries were verified and the first broken sequence number, if any" },
    })
    .get('/users/me/security-activity', async ({ request, ctx, query }) => page(request, await listSecurityActivity(deps, ctx, query)), {
      auth: 'user', errors: ['A400p'], query: SecurityActivityQuery, response: { 200: listEnvelope(AuditEntryDto) },
      detail: { summary: 'Your own recent sign-ins and credential changes, across every tenant, newest first', tags: ['Users'] },
    })
