-- What an edge package is built from (issue 13): embodiment profiles, training jobs and model versions.
-- Every row is a tenant's; (tenant_id, id) is unique so other tables can reference a row within its tenant.

create table embodiment_profiles (
  id                   uuid primary key default gen_random_uuid(),
  tenant_id            uuid not null references tenants (id) on delete cascade,
  name                 text not null,
  robot_type           text not null,
  control_rate_hz      double precision not null check (control_rate_hz > 0 and control_rate_hz <= 1000),
  observation_features jsonb not null,
  action_features      jsonb not null,
  version              bigint not null default 1,
  created_at           timestamptz not null default now(),
  updated_at           timestamptz not null default now(),
  unique (tenant_id, name),
  unique (tenant_id, id)
);
create index embodiment_profiles_list_idx on embodiment_profiles (tenant_id, created_at desc, id desc);

create table training_jobs (
  id                   uuid primary key default gen_random_uuid(),
  tenant_id            uuid not null references tenants (id) on delete cascade,
  name                 text not null,
  status               text not null default 'running' check (status in ('running', 'completed', 'failed')),
  -- An object key in the tenant's general bucket; only a completed job may have one.
  output_artifact_path text check (output_artifact_path is null or status = 'completed'),
  failure_reason       text,
  created_at           timestamptz not null default now(),
  completed_at         timestamptz,
  unique (tenant_id, id)
);
create index training_jobs_list_idx on training_jobs (tenant_id, created_at desc, id desc);

create table model_versions (
  id               uuid primary key default gen_random_uuid(),
  tenant_id        uuid not null references tenants (id) on delete cascade,
  name             text not null,
  format           text not null check (format in ('openpi', 'lerobot', 'onnx')),
  status           text not null default 'draft' check (status in ('draft', 'validating', 'ready', 'failed')),
  failure_reason   text,
  source_kind      text not null check (source_kind in ('imported_checkpoint', 'model_bundle', 'training_job')),
  -- The source as the caller declared it (path / prefix and keys / training job id).
  source           jsonb not null,
  training_job_id  uuid,
  -- [{key, sizeBytes, sha256}]: full object keys in the tenant's general bucket, with what the caller declared
  -- (nulls where it declared nothing); after validation, with what was measured.
  objects          jsonb not null,
  -- Set when validation starts: where the objects were checked (the package build reads them there).
  region_id        text,
  bucket           text,
  total_bytes      bigint,
  validated_at     timestamptz,
  created_at       timestamptz not null default now(),
  updated_at       timestamptz not null default now(),
  unique (tenant_id, id),
  foreign key (tenant_id, training_job_id) references training_jobs (tenant_id, id),
  check ((source_kind = 'training_job') = (training_job_id is not null)),
  check ((status = 'failed') = (failure_reason is not null))
);
create index model_versions_list_idx on model_versions (tenant_id, created_at desc, id desc);
