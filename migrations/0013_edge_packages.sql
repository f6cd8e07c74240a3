-- Edge inference packages (issue 13): one row per requested package, built by one workflow, and the runs its
-- robot-side client reported. The request is stored as understood (defaults applied), so the package, its DTO and
-- its provenance all say the same thing.
create table edge_packages (
  id                    uuid primary key default gen_random_uuid(),
  tenant_id             uuid not null references tenants (id) on delete cascade,
  model_version_id      uuid not null,
  embodiment_profile_id uuid not null,
  mode                  text not null check (mode in ('local', 'remote_ws')),
  strategy_key          text,
  remote_policy_host    text,
  remote_policy_port    integer check (remote_policy_port between 1 and 65535),
  steps                 integer not null check (steps between 1 and 100000),
  target_arch           text not null check (target_arch in ('x86-cuda', 'jetson-jp6', 'cpu')),
  wire_protocols        text[] not null check (cardinality(wire_protocols) > 0),
  use_fake_transport    boolean not null,
  status                text not null default 'queued' check (status in ('queued', 'building', 'ready', 'failed')),
  failure_reason        text,
  progress_bytes        bigint not null default 0,
  total_bytes           bigint,
  artifact_bucket       text,
  artifact_key          text,
  size_bytes            bigint,
  sha256                text,
  workflow_id           text not null,
  created_at            timestamptz not null default now(),
  updated_at            timestamptz not null default now(),
  unique (tenant_id, id),
  -- Within the tenant, so a package can never point at another tenant's row; RESTRICT refuses deleting a
  -- version or profile a package was built from (the profile's DELETE maps it to 409 EMBODIMENT_PROFILE_IN_USE).
  -- The create operation relies on the profile key for its 404: a profile of another tenant, or none, fails it.
  constraint edge_packages_model_version_fk foreign key (tenant_id, model_version_id) references model_versions (tenant_id, id) on delete restrict,
  constraint edge_packages_embodiment_profile_fk foreign key (tenant_id, embodiment_profile_id) references embodiment_profiles (tenant_id, id) on delete restrict,
  check (mode = 'local' or (remote_policy_host is not null and remote_policy_port is not null)),
  check ((status = 'failed') = (failure_reason is not null)),
  check ((status = 'ready') = (artifact_key is not null and sha256 is not null and size_bytes is not null))
);
create index edge_packages_list_idx on edge_packages (tenant_id, created_at desc, id desc);
create index edge_packages_version_idx on edge_packages (tenant_id, model_version_id, created_at desc, id desc);
create index edge_packages_profile_idx on edge_packages (tenant_id, embodiment_profile_id);

create table edge_package_runs (
  id                  uuid primary key default gen_random_uuid(),
  tenant_id           uuid not null references tenants (id) on delete cascade,
  package_id          uuid not null,
  steps_done          integer not null check (steps_done >= 0),
  latency_p50_ms      double precision,
  latency_p99_ms      double precision,
  contract_violations integer not null check (contract_violations >= 0),
  exit_reason         text not null,
  violations          jsonb not null,
  started_at          timestamptz not null,
  finished_at         timestamptz not null,
  reported_by         uuid not null,
  created_at          timestamptz not null default now(),
  foreign key (tenant_id, package_id) references edge_packages (tenant_id, id) on delete cascade
);
create index edge_package_runs_list_idx on edge_package_runs (tenant_id, package_id, created_at desc, id desc);
