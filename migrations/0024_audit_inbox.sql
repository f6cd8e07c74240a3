-- The audit trail's entries are sealed in batches after their transactions commit, not one by one as each commits.
--
-- Until now audit_append staged an entry in audit_pending and a deferred trigger sealed it at commit: it took the
-- chain's head-row lock, hashed the entry, moved it into audit_log, moved the head and looked for a subscribed
-- endpoint, all inside the change's own commit. That cost Postgres 250-300 µs of CPU per entry (a PAT creation
-- reached 68-71% of the same build without the audit insert), and a busy tenant's changes queued on its head row
-- for as long as each commit took to reach the disk.
--
-- Now the change's transaction writes the entry into audit_inbox and nothing else: a committed change still always
-- has its entry, and a rolled-back one has none, but numbering and hashing happen afterwards, for many entries at a
-- time, by audit_seal_batch (the API's sealer calls it every AUDIT_SEAL_INTERVAL_MS) and by audit_seal_chains, which
-- every reader of the trail calls first, so no reader ever sees an entry unsealed or misses a committed one.
-- Entries waiting in audit_inbox are data (they are committed): the inbox is logged and backed up.
drop trigger audit_pending_seal on audit_pending;
drop function audit_seal();
drop table audit_pending;

create table audit_inbox (like audit_log including defaults);
alter table audit_inbox alter column seq drop not null, alter column hash drop not null, add primary key (id);

-- A waiting entry is as unalterable as a sealed one: nothing updates it, and only the seal deletes it (it says so in
-- its own transaction, as the retention purge does for audit_log).
-- Checked once per statement, not per row: the seal deletes hundreds of rows in one.
create function audit_inbox_sealed_only() returns trigger language plpgsql as $$
begin
  if tg_op = 'DELETE' and current_setting('rcp.audit_seal', true) = 'on' then
    return null;
  end if;
  raise exception 'audit_inbox is append-only until sealed (% refused)', tg_op using errcode = 'insufficient_privilege';
end $$;
create trigger audit_inbox_sealed_only before update or delete or truncate on audit_inbox
  for each statement execute function audit_inbox_sealed_only();

-- The time of the chain's newest sealed entry: an entry whose transaction committed after a newer one was sealed
-- takes that time, so time never goes back along a chain (the export and the verification walk a window by seq).
alter table audit_chain_heads add column at timestamptz;
update audit_chain_heads h set at = (select a.occurred_at from audit_log a where a.chain = h.chain and a.seq = h.seq);

-- Appends one entry, unsealed, in the caller's transaction: the actor's label (an email, a token's name) is read
-- here, as it is at this moment, and the time is the change's.
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
  insert into audit_inbox select e.*;
  return e;
end $$;

-- Seals the waiting entries of `chains`, whose head rows the caller holds locked: takes at most `most` of them
-- (oldest first) out of the inbox, numbers each after its chain's head, hashes it onto its predecessor, writes them
-- all to audit_log in one statement, moves the heads, and writes the audit.entry event of each tenant entry whose
-- tenant has an enabled endpoint subscribed to it (the dispatcher's own rule: the stream costs the tenants that do
-- not take it nothing). Answers how many it sealed.
create function audit_seal_locked(chains text[], most int) returns int language plpgsql as $$
declare
  taken audit_log[];
  sealed audit_log[] := '{}';
  e audit_log;
  cur text := null;
  last bigint;
  prev bytea;
  last_at timestamptz;
begin
  perform set_config('rcp.audit_seal', 'on', true);
  with t as (
    delete from audit_inbox where id in (
      select id from audit_inbox where chain = any(chains) order by occurred_at, id limit most)
    returning *)
  select array_agg(t order by t.chain, t.occurred_at, t.id) into taken from t;
  perform set_config('rcp.audit_seal', 'off', true);
  if taken is null then
    return 0;
  end if;
  foreach e in array taken loop
    if cur is distinct from e.chain then
      if cur is not null then
        update audit_chain_heads set seq = last, hash = prev, at = last_at where chain = cur;
      end if;
      cur := e.chain;
      select h.seq, h.hash, h.at into last, prev, last_at from audit_chain_heads h where h.chain = cur;
    end if;
    last := last + 1;
    e.seq := last;
    if e.occurred_at < last_at then
      e.occurred_at := last_at;
    end if;
    last_at := e.occurred_at;
    e.hash := audit_link(prev, e);
    prev := e.hash;
    sealed := sealed || e;
  end loop;
  update audit_chain_heads set seq = last, hash = prev, at = last_at where chain = cur;
  insert into audit_log select * from unnest(sealed);
  insert into events (tenant_id, type, data)
    select s.tenant_id, 'audit.entry', audit_entry_json(s) from unnest(sealed) s
     where s.tenant_id is not null and exists (
       select 1 from webhook_endpoints w where w.tenant_id = s.tenant_id and w.enabled and w.events @> array['audit.entry'])
     order by s.chain, s.seq;
  return cardinality(taken);
end $$;

-- Makes the head rows the chains lack (a chain's first entry is sealed onto a head of seq 0), in chain order: two
-- sealers making the same heads wait for each other in one order, never in a cycle.
create function audit_heads_ensure(chains text[]) returns void language sql as $$
  insert into audit_chain_heads (chain, seq, hash)
    select c, 0, null::bytea from unnest(chains) c where not exists (select 1 from audit_chain_heads h where h.chain = c)
     order by c
  on conflict (chain) do nothing
$$;

-- The background sealer's step: the chains of the oldest `most` waiting entries, less those another sealer is
-- sealing right now (their head rows are locked: skipped, not waited for), at most `most` entries of them.
create function audit_seal_batch(most int) returns int language plpgsql as $$
declare
  chains text[];
begin
  chains := array(select distinct chain from (select chain from audit_inbox order by id limit most) w);
  if cardinality(chains) = 0 then
    return 0;
  end if;
  perform audit_heads_ensure(chains);
  chains := array(select chain from audit_chain_heads where chain = any(chains) order by chain for update skip locked);
  return audit_seal_locked(chains, most);
end $$;

-- A reader's step: seals every waiting entry of `chains`, waiting for a sealer at work on one of them to finish,
-- so the reader's next statement sees every entry committed before this one began, sealed.
create function audit_seal_chains(wanted text[]) returns int language plpgsql as $$
declare
  chains text[];
begin
  chains := array(select distinct chain from audit_inbox where chain = any(wanted));
  if cardinality(chains) = 0 then
    return 0;
  end if;
  perform audit_heads_ensure(chains);
  perform 1 from audit_chain_heads where chain = any(chains) order by chain for update;
  return audit_seal_locked(chains, 2147483647);
end $$;
