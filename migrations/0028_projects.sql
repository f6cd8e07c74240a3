-- Projects (issue 36): a tenant's own grouping, created and archived by its managers. Archiving is soft: the row
-- stays, so what later names a project keeps a target; archived_at is set exactly when archived is.

create table projects (
  id          uuid primary key default gen_random_uuid(),
  tenant_id   uuid not null references tenants (id) on delete cascade,
  name        text not null,
  slug        text not null check (slug ~ '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$'),
  description text,
  created_by  uuid,
  archived    boolean not null default false,
  archived_at timestamptz,
  version     bigint not null default 1,
  created_at  timestamptz not null default now(),
  updated_at  timestamptz not null default now(),
  check (archived = (archived_at is not null)),
  unique (tenant_id, slug),
  unique (tenant_id, id)
);
create index projects_list_idx on projects (tenant_id, created_at desc, id desc);
