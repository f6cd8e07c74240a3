-- Billing (issue 38): one subscription per tenant, its invoices as immutable hashed snapshots, and the operator's
-- block. Money is bigint minor units of the invoice's ISO 4217 currency; nothing is stored as a float.

create table subscriptions (
  id                        uuid primary key default gen_random_uuid(),
  tenant_id                 uuid not null unique references tenants (id) on delete cascade,
  plan_id                   text not null,
  status                    text not null check (status in ('trialing', 'active', 'past_due', 'unpaid', 'canceled', 'paused')),
  current_period_start      timestamptz not null,
  current_period_end        timestamptz not null check (current_period_end > current_period_start),
  cancel_at_period_end      boolean not null default false,
  -- When the first failed payment of the current debt arrived: the grace period counts from it.
  past_due_since            timestamptz,
  canceled_at               timestamptz,
  -- An operator's block, independent of the status: a payment does not lift it.
  operator_blocked_at       timestamptz,
  operator_block_reason     text,
  -- A payment provider's references, empty until one is attached.
  provider                  text,
  provider_customer_ref     text,
  provider_subscription_ref text,
  version                   integer not null default 1,
  created_at                timestamptz not null default now(),
  updated_at                timestamptz not null default now()
);
-- The sweep's two questions: whose period has ended, and whose grace has run out.
create index subscriptions_period_end_idx on subscriptions (current_period_end) where status <> 'canceled';
create index subscriptions_past_due_idx on subscriptions (past_due_since) where status = 'past_due';

-- Tenants that exist before billing get the shipped price book's default plan, their first period running from now to
-- the end of this month (UTC). A deployment whose price book has no "standard" plan changes it by PATCH.
insert into subscriptions (tenant_id, plan_id, status, current_period_start, current_period_end)
select id, 'standard', 'active', now(), date_trunc('month', now() at time zone 'UTC') at time zone 'UTC' + interval '1 month'
  from tenants;

create table invoices (
  id              uuid primary key default gen_random_uuid(),
  tenant_id       uuid not null references tenants (id) on delete cascade,
  subscription_id uuid not null references subscriptions (id) on delete cascade,
  period          text not null check (period ~ '^\d{4}-(0[1-9]|1[0-2])$'),
  period_start    timestamptz not null,
  period_end      timestamptz not null,
  -- Usage recorded before this instant is in this invoice (or an earlier one); later arrivals go to the next.
  usage_cutoff    timestamptz not null,
  plan_id         text not null,
  currency        text not null check (currency ~ '^[A-Z]{3}$'),
  lines           jsonb not null,
  subtotal        bigint not null,
  total           bigint not null,
  -- sha256 of the canonical snapshot (api/billing/snapshot.ts): recomputed from the row, it proves nothing changed.
  hash            text not null check (hash ~ '^[0-9a-f]{64}$'),
  status          text not null default 'open' check (status in ('open', 'paid', 'void')),
  created_at      timestamptz not null default now(), -- when it was finalized
  paid_at         timestamptz,
  provider_invoice_ref text,
  -- Exactly one snapshot per subscription and period, however many closes race.
  unique (subscription_id, period)
);
create index invoices_tenant_list_idx on invoices (tenant_id, created_at desc, id desc);

-- Finalized means immutable: what was billed never changes; only the payment status, its time and the provider's
-- reference may.
create function invoices_immutable() returns trigger language plpgsql as $$
begin
  if (new.id, new.tenant_id, new.subscription_id, new.period, new.period_start, new.period_end, new.usage_cutoff, new.plan_id,
      new.currency, new.lines, new.subtotal, new.total, new.hash, new.created_at)
     is distinct from
     (old.id, old.tenant_id, old.subscription_id, old.period, old.period_start, old.period_end, old.usage_cutoff, old.plan_id,
      old.currency, old.lines, old.subtotal, old.total, old.hash, old.created_at) then
    raise exception 'a finalized invoice snapshot cannot change' using errcode = 'check_violation';
  end if;
  return new;
end $$;
create trigger invoices_immutable before update on invoices for each row execute function invoices_immutable();
