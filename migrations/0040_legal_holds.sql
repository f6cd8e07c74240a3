-- Legal holds (issue 37): a matter and a reason, and exactly one scope: the whole tenant, one member (a user id), or
-- one project. A hold is released, never deleted, so the record of what was preserved and when stays. The user id
-- carries no foreign key: a hold names the person, and outlives neither their account (erasure is refused while it
-- is active) nor is it removed with their membership.

create table legal_holds (
  id          uuid primary key default gen_random_uuid(),
  tenant_id   uuid not null references tenants (id) on delete cascade,
  matter      text not null,
  reason      text not null,
  scope_kind  text not null check (scope_kind in ('tenant', 'member', 'project')),
  user_id     uuid,
  project_id  uuid,
  created_by  uuid not null,
  created_at  timestamptz not null default now(),
  released_at timestamptz,
  released_by uuid,
  check ((scope_kind = 'tenant' and user_id is null and project_id is null)
      or (scope_kind = 'member' and user_id is not null and project_id is null)
      or (scope_kind = 'project' and project_id is not null and user_id is null)),
  check ((released_at is null) = (released_by is null)),
  foreign key (tenant_id, project_id) references projects (tenant_id, id)
);
create index legal_holds_list_idx on legal_holds (tenant_id, created_at desc, id desc);
-- What the purges and the erasure ask: the active holds, few in any deployment.
create index legal_holds_active_idx on legal_holds (tenant_id) where released_at is null;
create index legal_holds_active_user_idx on legal_holds (user_id) where released_at is null and user_id is not null;
