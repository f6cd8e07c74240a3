-- The audit trail names a token's actions by the token's name as it is when they happen, and the API now takes that
-- name from the token it resolved (api/credentials/service.ts), which a replica may hold in its cache: a rename
-- evicts it like any other change to the token, so no entry names the token by a name it no longer has.
drop trigger api_keys_credential_change on api_keys;
create trigger api_keys_credential_change after update on api_keys for each row
  when ((old.revoked_at, old.expires_at, old.scopes, old.membership_id, old.user_id, old.tenant_id, old.token_hash, old.name)
        is distinct from (new.revoked_at, new.expires_at, new.scopes, new.membership_id, new.user_id, new.tenant_id, new.token_hash, new.name))
  execute function notify_credential_change('k');
