-- Tenant deletion jobs (issue 37). One row per job: claimed by compare-and-set, its cursor and counts written in the
-- same transaction as each batch it deletes, so a worker killed mid-job resumes where the last commit left it and
-- counts nothing twice. No foreign key to tenants on purpose: the job and its signed receipt outlive the tenant.
create table tenant_deletion_jobs (
  id                uuid primary key default gen_random_uuid(),
  tenant_id         uuid not null,
  status            text not null default 'queued' check (status in ('queued', 'running', 'blocked', 'failed', 'succeeded')),
  trigger           text not null check (trigger in ('request', 'window_elapsed')),
  requested_by      uuid,
  -- The workflow run holding the job (its first run id, kept across continue-as-new); a retry claims it anew.
  claim             text,
  attempts          integer not null default 0,
  phase             text not null default 'credentials' check (phase in ('credentials', 'buckets', 'rows', 'receipt', 'done')),
  step_index        integer not null default 0,
  -- Object keys handed to one multi-object delete and not yet counted: a resumed job deletes them again (a no-op
  -- for S3) and counts them once.
  pending_keys      jsonb,
  counts            jsonb not null default '{}',
  -- The buckets as their step found them ({kind: {name, regionId}}): the receipt checks them after their rows are gone.
  buckets           jsonb not null default '{}',
  final_event_id    uuid,
  blocked_reason    text,
  error             text,
  receipt           jsonb,
  created_at        timestamptz not null default now(),
  updated_at        timestamptz not null default now(),
  started_at        timestamptz,
  finished_at       timestamptz
);
-- One open job per tenant: a second request while one is queued or running is TENANT_DELETION_JOB_CONFLICT.
create unique index tenant_deletion_jobs_open_key on tenant_deletion_jobs (tenant_id) where status in ('queued', 'running');
create index tenant_deletion_jobs_tenant_idx on tenant_deletion_jobs (tenant_id, created_at desc, id desc);
