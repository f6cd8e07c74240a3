-- A tenant's lifecycle (issue 37): active, then offboarding (an open offboarding request; new work refused, reads and
-- exports still served), then deleting (the deletion job runs), then deleted. The new-work gate (api/http/new-work.ts)
-- reads it with the credential, so it sits on tenants, which both credential lookups already reach.
alter table tenants
  add column lifecycle text not null default 'active' check (lifecycle in ('active', 'offboarding', 'deleting', 'deleted')),
  add column lifecycle_changed_at timestamptz;

-- A cached PAT carries its tenant's standing: a change evicts every cached token of the tenant on every replica
-- ('t:<tenantId>', api/credentials/cache.ts), in commit order like the other credential changes (0007).
create trigger tenants_credential_change after update on tenants for each row
  when (old.lifecycle is distinct from new.lifecycle)
  execute function notify_credential_change('t');
