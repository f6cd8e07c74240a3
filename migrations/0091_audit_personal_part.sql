-- Audit entries that outlive their person or tenant with the personal part pseudonymised, and the chain still
-- verifying (issue 37). Entries sealed from now on are in a second canonical form: the hash covers, in place of the
-- actor's label (an email, a token's name), the client address, the user agent, details' email (an invitee's, a
-- provisioned account's) and changes' displayName, the SHA-256 of a separately stored personal part:
-- [nonce, label, ip, user agent, details.email, changes.displayName], the nonce 32 random bytes of the entry's own. Account erasure
-- and tenant deletion blank the personal part, nonce included, through audit_erase_personal: the chain keeps the
-- digest and still verifies, and without the nonce the digest cannot be tested against guessed addresses.
--
-- Entries sealed before this migration (personal_digest null) keep the first form: their hashes cover the plaintext,
-- and re-hashing them would rewrite links customers have already exported or streamed. They age out under
-- AUDIT_RETENTION_DAYS. Both columns are added last to both tables, as trace_id was: the seal moves whole rows.
alter table audit_log add column personal_nonce bytea, add column personal_digest bytea;
alter table audit_inbox add column personal_nonce bytea, add column personal_digest bytea;

create function audit_personal_digest(a audit_log) returns bytea language sql immutable as $$
  select sha256(convert_to(jsonb_build_array(
    encode(a.personal_nonce, 'hex'), a.actor_label, a.ip, a.user_agent, a.details -> 'email', a.changes -> 'displayName')::text, 'UTF8'))
$$;

-- The first form for entries without a personal digest, unchanged; the second puts nulls where the personal fields
-- were and the digest (hex) last.
create or replace function audit_canonical(a audit_log) returns text language sql immutable as $$
  select case when a.personal_digest is null then jsonb_build_array(
    a.id, a.chain, a.seq, (extract(epoch from a.occurred_at) * 1000000)::bigint, a.tenant_id, a.subject_user_id,
    a.actor_type, a.actor_id, a.actor_label, a.credential_id, a.action, a.target_type, a.target_id, a.outcome,
    a.reason, a.ip, a.user_agent, a.request_id, a.changes, a.details)::text
  else jsonb_build_array(
    a.id, a.chain, a.seq, (extract(epoch from a.occurred_at) * 1000000)::bigint, a.tenant_id, a.subject_user_id,
    a.actor_type, a.actor_id, null, a.credential_id, a.action, a.target_type, a.target_id, a.outcome,
    a.reason, null, null, a.request_id, a.changes - 'displayName', a.details - 'email', encode(a.personal_digest, 'hex'))::text
  end
$$;

-- The personal part is sound: blanked whole (nonce, label, ip, user agent null, no details.email, no
-- changes.displayName), or matching its digest.
create function audit_personal_ok(a audit_log) returns boolean language sql immutable as $$
  select a.personal_digest is null
      or (a.personal_nonce is null and a.actor_label is null and a.ip is null and a.user_agent is null
          and not coalesce(a.details ? 'email', false) and not coalesce(a.changes ? 'displayName', false))
      or (a.personal_nonce is not null and a.personal_digest = audit_personal_digest(a))
$$;

-- As before (migrations/0024), plus the entry's nonce and digest, taken once the label is known.
create or replace function audit_append(e audit_log) returns audit_log language plpgsql as $$
begin
  if e.actor_label is null and e.actor_type = 'api_key' and e.credential_id is not null then
    select name into e.actor_label from api_keys where id = e.credential_id;
  end if;
  if e.actor_label is null and e.actor_type in ('user', 'api_key') and e.actor_id is not null then
    select email into e.actor_label from users where id = e.actor_id::uuid;
  end if;
  e.seq := null;
  e.hash := null;
  e.occurred_at := clock_timestamp();
  e.personal_nonce := uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid());
  e.personal_digest := audit_personal_digest(e);
  insert into audit_inbox select e.*;
  return e;
end $$;

-- Still append-only, with one exception: audit_erase_personal blanking the personal part of second-form entries,
-- and nothing else of them.
create or replace function audit_log_append_only() returns trigger language plpgsql as $$
begin
  if tg_op = 'DELETE' and current_setting('rcp.audit_purge', true) = 'on' then
    if old.occurred_at < now() - interval '1 day' then
      return old;
    end if;
    raise exception 'audit_log keeps every entry for at least a day (the purge refused seq % of %)', old.seq, old.chain
      using errcode = 'insufficient_privilege';
  end if;
  if tg_op = 'UPDATE' and current_setting('rcp.audit_erase', true) = 'on' and old.personal_digest is not null
     and new.personal_nonce is null and new.actor_label is null and new.ip is null and new.user_agent is null
     and new.details is not distinct from old.details - 'email' and new.changes is not distinct from old.changes - 'displayName'
     and to_jsonb(new) - array['personal_nonce', 'actor_label', 'ip', 'user_agent', 'details', 'changes']
       = to_jsonb(old) - array['personal_nonce', 'actor_label', 'ip', 'user_agent', 'details', 'changes'] then
    return new;
  end if;
  raise exception 'audit_log is append-only (% refused)', tg_op using errcode = 'insufficient_privilege';
end $$;

-- Blanks the personal part of the sealed second-form entries an erased person acted in, is the subject of, or is
-- named in by address (`person`, `address`: an invitation to them, their provisioning), or of a deleted tenant's
-- entries (`tenant`); answers how many. Entries still waiting in the inbox are sealed first, so none escapes. The
-- address match reads every second-form entry's details: an erasure is rare, and no index would serve only it.
create function audit_erase_personal(person uuid, address text, tenant uuid) returns int language plpgsql as $$
declare
  n int;
begin
  perform audit_seal_chains(array(select distinct chain from audit_inbox));
  perform set_config('rcp.audit_erase', 'on', true);
  update audit_log set personal_nonce = null, actor_label = null, ip = null, user_agent = null,
         details = details - 'email', changes = changes - 'displayName'
   where personal_digest is not null and personal_nonce is not null
     and ((person is not null and (actor_id = person::text or subject_user_id = person))
       or (address is not null and lower(details ->> 'email') = lower(address))
       or (tenant is not null and tenant_id = tenant));
  get diagnostics n = row_count;
  perform set_config('rcp.audit_erase', 'off', true);
  return n;
end $$;
