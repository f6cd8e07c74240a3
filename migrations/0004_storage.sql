-- Tenant storage: the three buckets per tenant, their usage, the objects the platform expects to exist,
-- and reconciliation jobs with their findings. Every table is keyed by tenant_id first.

create table storage_buckets (
  tenant_id      uuid not null references tenants (id) on delete cascade,
  kind           text not null check (kind in ('general', 'dataset', 'export')),
  name           text not null,
  region_id      text not null,
  status         text not null check (status in ('provisioning', 'ready', 'failed')),
  versioning     boolean not null,
  expire_days    integer,
  failure_reason text,
  created_at     timestamptz not null default now(),
  updated_at     timestamptz not null default now(),
  primary key (tenant_id, kind)
);
-- Names are derived from the tenant; two tenants can never share one, even in different regions.
create unique index storage_buckets_name_key on storage_buckets (name);

create table storage_usage (
  tenant_id    uuid not null references tenants (id) on delete cascade,
  kind         text not null,
  bucket       text not null,
  object_count bigint not null,
  bytes        bigint not null,
  computed_at  timestamptz not null,
  primary key (tenant_id, kind)
);

-- What other domains (model artifacts, packages) record as stored. "C" collation: keys sort byte-wise,
-- exactly as S3 lists them, so reconciliation can merge both sorted streams page by page.
create table storage_expected_objects (
  tenant_id  uuid not null references tenants (id) on delete cascade,
  bucket     text not null,
  key        text collate "C" not null,
  kind       text not null,
  created_at timestamptz not null default now(),
  primary key (tenant_id, bucket, key)
);

create table storage_reconciliation_jobs (
  id              uuid primary key default gen_random_uuid(),
  tenant_id       uuid not null references tenants (id) on delete cascade,
  status          text not null check (status in ('queued', 'running', 'succeeded', 'failed')),
  dry_run         boolean not null,
  created_by      uuid references users (id) on delete set null,
  objects_scanned bigint not null default 0,
  bytes_scanned   bigint not null default 0,
  orphan_count    bigint not null default 0,
  missing_count   bigint not null default 0,
  error_code      text,
  error_message   text,
  created_at      timestamptz not null default now(),
  started_at      timestamptz,
  finished_at     timestamptz,
  updated_at      timestamptz not null default now()
);
create index storage_reconciliation_jobs_tenant_idx on storage_reconciliation_jobs (tenant_id, created_at desc, id desc);
-- At most one queued or running job per tenant: a second request finds it instead of racing it.
create unique index storage_reconciliation_jobs_active_key on storage_reconciliation_jobs (tenant_id) where status in ('queued', 'running');

create table storage_reconciliation_findings (
  job_id    uuid not null references storage_reconciliation_jobs (id) on delete cascade,
  tenant_id uuid not null references tenants (id) on delete cascade,
  kind      text not null check (kind in ('orphan', 'missing')),
  bucket    text not null,
  key       text collate "C" not null,
  size      bigint,
  primary key (job_id, kind, bucket, key)
);
