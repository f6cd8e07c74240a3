-- Every API replica caches resolved personal access tokens (api/identity/credential-cache.ts). Any change that can
-- narrow what a cached token may do is announced on one channel, whatever code or operator made it, so replicas
-- evict at once. NOTIFY is delivered in commit order, which is what the replicas' freshness fence relies on.
-- Payload: '<kind>:<id>', kind k = api key, m = membership, u = user. Inserts announce nothing: only hits are cached.
create function notify_credential_change() returns trigger language plpgsql as $$
begin
  perform pg_notify('rcp_credentials', tg_argv[0] || ':' || (case when tg_op = 'DELETE' then old.id else new.id end)::text);
  return null;
end $$;

-- last_used_at is written by the batched flush and changes nothing a token may do: it must not evict.
create trigger api_keys_credential_change after update on api_keys for each row
  when ((old.revoked_at, old.expires_at, old.scopes, old.membership_id, old.user_id, old.tenant_id, old.token_hash)
        is distinct from (new.revoked_at, new.expires_at, new.scopes, new.membership_id, new.user_id, new.tenant_id, new.token_hash))
  execute function notify_credential_change('k');
create trigger api_keys_credential_delete after delete on api_keys for each row
  execute function notify_credential_change('k');

create trigger memberships_credential_change after update on memberships for each row
  when ((old.role, old.status, old.expires_at, old.tenant_id, old.user_id)
        is distinct from (new.role, new.status, new.expires_at, new.tenant_id, new.user_id))
  execute function notify_credential_change('m');
create trigger memberships_credential_delete after delete on memberships for each row
  execute function notify_credential_change('m');

create trigger users_credential_change after update on users for each row
  when (old.status is distinct from new.status)
  execute function notify_credential_change('u');
create trigger users_credential_delete after delete on users for each row
  execute function notify_credential_change('u');
