-- The audit trail (issue 18). One row per security-relevant change, written by api/audit in the same transaction
-- as the change. Rows are append-only and hash-chained per chain: a tenant's id for tenant entries, the user's id
-- for account-level ones, 'anonymous' for failures that name no known account. A chain's head row is the only
-- lock an append takes, so unrelated tenants never wait for each other; and it is taken at commit (a deferred
-- trigger seals the transaction's entries out of audit_pending), so it is held for the commit alone, never across a
-- round trip to the API: a busy tenant's changes queue on it only as long as the server needs to seal and commit.
--
-- tenant_id and subject_user_id carry no foreign key on purpose: entries outlive the tenant or account they
-- describe until the retention purge removes them.
create table audit_log (
  id              uuid primary key,
  chain           text not null,
  seq             bigint not null,
  hash            bytea not null,
  occurred_at     timestamptz not null,
  tenant_id       uuid,
  subject_user_id uuid,
  actor_type      text not null check (actor_type in ('user', 'api_key', 'system', 'anonymous')),
  actor_id        text,
  actor_label     text,
  credential_id   uuid,
  action          text not null,
  target_type     text,
  target_id       text,
  outcome         text not null check (outcome in ('success', 'failure')),
  reason          text,
  ip              text,
  user_agent      text,
  request_id      text,
  changes         jsonb,
  details         jsonb,
  unique (chain, seq)
);
create index audit_log_tenant_time_idx on audit_log (tenant_id, occurred_at desc, id desc) where tenant_id is not null;
create index audit_log_subject_time_idx on audit_log (subject_user_id, occurred_at desc, id desc) where subject_user_id is not null;
-- The retention purge's walk by time: BRIN, because entries arrive in time order and this index is paid by every
-- append while only the purge reads it.
create index audit_log_time_idx on audit_log using brin (occurred_at);

create table audit_chain_heads (
  chain text primary key,
  seq   bigint not null,
  hash  bytea
);

-- Entries on their way in: audit_append writes them here, and the seal moves each into audit_log, numbered and
-- hashed, as its transaction commits. Unlogged: a row here never outlives its transaction, so a crash loses nothing.
create unlogged table audit_pending (like audit_log including defaults);
alter table audit_pending alter column seq drop not null, alter column hash drop not null, add primary key (id);

-- The canonical form an entry's hash covers: a JSON array of every column but the hash, in this order, as
-- PostgreSQL's jsonb renders it (", " between items, object keys ordered by length then bytes), the time as
-- integer microseconds since the epoch. docs/security.md "Audit trail", "Tamper evidence" shows how to recompute it.
create function audit_canonical(a audit_log) returns text language sql immutable as $$
  select jsonb_build_array(
    a.id, a.chain, a.seq, (extract(epoch from a.occurred_at) * 1000000)::bigint, a.tenant_id, a.subject_user_id,
    a.actor_type, a.actor_id, a.actor_label, a.credential_id, a.action, a.target_type, a.target_id, a.outcome,
    a.reason, a.ip, a.user_agent, a.request_id, a.changes, a.details)::text
$$;

-- A chain starts from 32 zero bytes; each link is sha256(previous hash || canonical form).
create function audit_link(prev bytea, a audit_log) returns bytea language sql immutable as $$
  select sha256(coalesce(prev, '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea) || convert_to(audit_canonical(a), 'UTF8'))
$$;

-- An entry as the API shows it (api/audit/service.ts toAuditEntry; the catalogue's audit.entry schema), for the
-- event that streams it to the tenant's webhook endpoints.
create function audit_entry_json(a audit_log) returns jsonb language sql immutable as $$
  select jsonb_build_object(
    'id', a.id, 'seq', a.seq, 'occurredAt', to_char(a.occurred_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'tenantId', a.tenant_id,
    'actor', jsonb_build_object('type', a.actor_type, 'id', a.actor_id, 'label', a.actor_label, 'credentialId', a.credential_id),
    'action', a.action,
    'target', case when a.target_type is null then null else jsonb_build_object('type', a.target_type, 'id', a.target_id) end,
    'outcome', a.outcome, 'reason', a.reason, 'ip', a.ip, 'userAgent', a.user_agent, 'requestId', a.request_id,
    'changes', a.changes, 'details', a.details, 'hash', encode(a.hash, 'hex'))
$$;

-- Appends one entry, unsealed: the actor's label (an email, a token's name) is read here, as it is at this moment.
create function audit_append(e audit_log) returns audit_log language plpgsql as $$
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
  insert into audit_pending select e.*;
  return e;
end $$;

-- Seals an entry as its transaction commits: takes its chain's head row lock, numbers it, stamps the time, hashes
-- it, writes it to audit_log, moves the head, and (for a tenant entry, when the tenant has an enabled endpoint
-- subscribed to audit.entry) writes its audit.entry event to the outbox, all in that transaction. Entries of one
-- transaction are sealed in the order they were written.
create function audit_seal() returns trigger language plpgsql as $$
declare
  prev bytea;
  last bigint;
  e audit_log;
begin
  select seq, hash into last, prev from audit_chain_heads where chain = new.chain for update;
  if not found then
    -- A chain's first entry; a concurrent first one makes this insert wait, then find the row.
    insert into audit_chain_heads (chain, seq, hash) values (new.chain, 0, null::bytea) on conflict (chain) do nothing;
    select seq, hash into last, prev from audit_chain_heads where chain = new.chain for update;
  end if;
  select (new).* into e;
  e.seq := last + 1;
  e.occurred_at := clock_timestamp();
  e.hash := audit_link(prev, e);
  insert into audit_log select e.*;
  delete from audit_pending where id = e.id;
  update audit_chain_heads set seq = e.seq, hash = e.hash where chain = e.chain;
  -- Only for a tenant that has an endpoint to carry it (the dispatcher's own rule): the trail's stream costs nothing
  -- to the tenants that do not take it.
  if e.tenant_id is not null and exists (
    select 1 from webhook_endpoints where tenant_id = e.tenant_id and enabled and events @> array['audit.entry']) then
    insert into events (tenant_id, type, data) values (e.tenant_id, 'audit.entry', audit_entry_json(e));
  end if;
  return null;
end $$;
create constraint trigger audit_pending_seal after insert on audit_pending deferrable initially deferred
  for each row execute function audit_seal();

-- Append-only: no UPDATE, no DELETE, no TRUNCATE, except the retention purge, which says so in its own
-- transaction (set local rcp.audit_purge = 'on'; api/audit/queries purgeAuditEntries).
create function audit_log_append_only() returns trigger language plpgsql as $$
begin
  if tg_op = 'DELETE' and current_setting('rcp.audit_purge', true) = 'on' then
    return old;
  end if;
  raise exception 'audit_log is append-only (% refused)', tg_op using errcode = 'insufficient_privilege';
end $$;
create trigger audit_log_no_update before update or delete on audit_log for each row execute function audit_log_append_only();
create trigger audit_log_no_truncate before truncate on audit_log for each statement execute function audit_log_append_only();
