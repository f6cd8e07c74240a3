-- A deleted tenant's audit entries lose their personal part in bounded batches (issue 37): audit_erase_personal's
-- `tenant` branch blanked every entry of the tenant in one statement, one transaction holding a million row locks and
-- their WAL at once for a busy tenant. The tenant's entries are its own chain, so the deletion job walks that chain by
-- seq (the (chain, seq) key) a batch at a time and keeps the last seq walked on its row, committed with the batch: a
-- worker killed between batches resumes after it, blanks nothing twice and skips nothing.
alter table tenant_deletion_jobs add column audit_erased_through bigint not null default 0;

-- Seals the chain's waiting entries, then blanks the personal part of the next `most` entries after seq `after`
-- (second-form entries still holding one; first-form entries and blanked ones are walked past). Answers the entries
-- walked, the entries blanked and the last seq walked (`after` when none was left).
create function audit_erase_tenant_batch(tenant uuid, after bigint, most int, out walked int, out blanked int, out through bigint)
language plpgsql as $$
begin
  perform audit_seal_chains(array[tenant::text]);
  perform set_config('rcp.audit_erase', 'on', true);
  with walk as (
    select id, seq from audit_log where chain = tenant::text and seq > after order by seq limit most
  ), done as (
    update audit_log a set personal_nonce = null, actor_label = null, ip = null, user_agent = null,
           details = a.details - 'email', changes = a.changes - 'displayName'
      from walk w
     where a.id = w.id and a.personal_digest is not null and a.personal_nonce is not null
    returning 1
  )
  select (select count(*) from walk)::int, (select count(*) from done)::int, coalesce((select max(seq) from walk), after)
    into walked, blanked, through;
  perform set_config('rcp.audit_erase', 'off', true);
end $$;
