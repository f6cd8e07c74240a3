-- The verification could vouch for a chain whose newest entries were deleted: it checked each entry against its
-- predecessor inside the window and nothing after the window's last entry. It now checks both edges of the window
-- against what the chain must hold there (api/audit/queries.ts verifyChain): the entry after the window, or the
-- chain's head when none follows, and the retention purge's mark at the chain's start. For those to be evidence, the
-- head and the mark may only move forward, and the purge may only take what retention allows.

-- The highest seq the retention purge removed from the chain: entries up to it are gone by rule, and the chain's
-- oldest entry must follow it.
alter table audit_chain_heads add column purged_through bigint not null default 0;

-- A head moves forward as entries are sealed and its mark as entries are purged; neither is ever rewound, rewritten
-- or removed (a chain outlives its tenant, as its entries do).
create function audit_chain_heads_forward_only() returns trigger language plpgsql as $$
begin
  if tg_op = 'UPDATE' then
    if new.chain = old.chain and new.seq >= old.seq and new.purged_through >= old.purged_through
       and (new.seq > old.seq or new.hash is not distinct from old.hash) then
      return new;
    end if;
  end if;
  raise exception 'audit_chain_heads only move forward (% refused)', tg_op using errcode = 'insufficient_privilege';
end $$;
create trigger audit_chain_heads_forward before update or delete on audit_chain_heads
  for each row execute function audit_chain_heads_forward_only();
create trigger audit_chain_heads_no_truncate before truncate on audit_chain_heads
  for each statement execute function audit_chain_heads_forward_only();

-- The purge's own permission no longer reaches a young entry: retention is at least a day (AUDIT_RETENTION_DAYS),
-- so a session that turns the setting on still cannot take back what was just recorded.
create or replace function audit_log_append_only() returns trigger language plpgsql as $$
begin
  if tg_op = 'DELETE' and current_setting('rcp.audit_purge', true) = 'on' then
    if old.occurred_at < now() - interval '1 day' then
      return old;
    end if;
    raise exception 'audit_log keeps every entry for at least a day (the purge refused seq % of %)', old.seq, old.chain
      using errcode = 'insufficient_privilege';
  end if;
  raise exception 'audit_log is append-only (% refused)', tg_op using errcode = 'insufficient_privilege';
end $$;
