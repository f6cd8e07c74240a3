-- Tenant deletion (issue 37): the deletion disables the tenant's webhook endpoints after their final tenant.deleted
-- event, with a reason of its own.
alter table webhook_endpoints drop constraint webhook_endpoints_disabled_reason_check;
alter table webhook_endpoints add constraint webhook_endpoints_disabled_reason_check
  check (disabled_reason in ('gone', 'failing', 'manual', 'tenant_deleted'));
