-- Request budgets shared by every API replica (docs/api.md "Rate budgets"): one token bucket per principal and per
-- tenant. Replicas lease tokens from it in small batches (api/rate-budgets), so no request waits on this table
-- unless its replica's lease ran out. Unlogged: after a crash every bucket starts full, which is what an idle one is.
create unlogged table rate_budgets (
  kind   text not null,
  id     text not null,
  tokens double precision not null,
  at     timestamptz not null,
  primary key (kind, id)
);

-- Refills the bucket to now (capacity `cap`, `per_second` a second), takes up to `want` whole tokens, and answers
-- how many it took, or, when none was left, minus the seconds until one will be.
create function rate_budget_lease(p_kind text, p_id text, cap double precision, per_second double precision, want integer)
returns double precision language plpgsql as $$
declare
  b rate_budgets;
  available double precision;
  taken integer;
begin
  insert into rate_budgets (kind, id, tokens, at) values (p_kind, p_id, cap, clock_timestamp()) on conflict do nothing;
  select * into b from rate_budgets where kind = p_kind and id = p_id for update;
  available := least(cap, b.tokens + extract(epoch from clock_timestamp() - b.at) * per_second);
  taken := least(want, floor(available))::integer;
  update rate_budgets set tokens = available - taken, at = clock_timestamp() where kind = p_kind and id = p_id;
  if taken > 0 then return taken; end if;
  return -((1 - available) / per_second);
end $$;
