-- Offboarding requests (issue 37). One request is live per tenant at a time: open (window running), then
-- window_elapsed (the deletion job takes over from there), or cancelled (the tenant reactivated). The unique partial
-- index decides between concurrent requests: exactly one insert wins.
create table tenant_offboarding_requests (
  id                 uuid primary key default gen_random_uuid(),
  tenant_id          uuid not null references tenants (id) on delete cascade,
  state              text not null default 'open' check (state in ('open', 'window_elapsed', 'cancelled')),
  requested_by       uuid references users (id) on delete set null,
  retention_days     integer not null check (retention_days >= 1),
  window_ends_at     timestamptz not null,
  workflow_id        text not null,
  export_status      text not null default 'pending' check (export_status in ('pending', 'ready', 'failed')),
  export_region_id   text,
  export_bucket      text,
  export_prefix      text,
  export_sha256      text,
  export_rows        bigint,
  export_objects     bigint,
  export_error       text,
  export_ready_at    timestamptz,
  cancelled_by       uuid references users (id) on delete set null,
  cancelled_at       timestamptz,
  window_elapsed_at  timestamptz,
  created_at         timestamptz not null default now(),
  updated_at         timestamptz not null default now()
);

create unique index tenant_offboarding_requests_live on tenant_offboarding_requests (tenant_id) where state <> 'cancelled';
create index tenant_offboarding_requests_tenant on tenant_offboarding_requests (tenant_id, created_at desc);
