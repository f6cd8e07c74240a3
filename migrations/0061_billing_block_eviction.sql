-- A cached PAT carries its tenant's billing block (api/billing/block.ts): a change of the subscription's status or of
-- an operator's block evicts every cached token of the tenant on every replica ('t:<tenantId>', as 0045 does for the
-- lifecycle), so a block and its lifting both take effect on the tenant's next request.
create function notify_subscription_credential_change() returns trigger language plpgsql as $$
begin
  perform pg_notify('rcp_credentials', 't:' || new.tenant_id::text);
  return null;
end $$;

create trigger subscriptions_credential_change after update on subscriptions for each row
  when ((old.status, old.operator_blocked_at) is distinct from (new.status, new.operator_blocked_at))
  execute function notify_subscription_credential_change();
