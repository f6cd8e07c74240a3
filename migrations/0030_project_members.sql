-- Project memberships (issue 36): a tenant member added to one project with a project role, an optional overlay of
-- project-scope permission points, an optional expiry and who granted it. The tenant membership is referenced, not
-- copied: what the member holds in the project is worked out from both on every request (api/identity/permissions.ts
-- projectPermissions), so a tenant demotion or removal takes effect in every project at once.

create table project_members (
  id            uuid primary key default gen_random_uuid(),
  tenant_id     uuid not null,
  project_id    uuid not null,
  membership_id uuid not null references memberships (id) on delete cascade,
  user_id       uuid not null references users (id) on delete cascade,
  role          text not null check (role in ('maintainer', 'contributor', 'reader')),
  grant_points  text[] not null default '{}',
  deny_points   text[] not null default '{}',
  expires_at    timestamptz,
  granted_by    uuid references users (id) on delete set null,
  version       bigint not null default 1,
  created_at    timestamptz not null default now(),
  updated_at    timestamptz not null default now(),
  foreign key (tenant_id, project_id) references projects (tenant_id, id) on delete cascade,
  unique (project_id, user_id)
);
-- The members page of one project, newest first (keyset on created_at, id).
create index project_members_list_idx on project_members (project_id, created_at desc, id desc);
-- Housekeeping's purge of expired rows.
create index project_members_expiry_idx on project_members (expires_at) where expires_at is not null;
create index project_members_membership_idx on project_members (membership_id);

-- A cached project-scoped token hangs off its member's tenant membership (api/credentials/cache.ts), so a change to
-- a project membership evicts it under that membership's key ('m:'), whatever code or operator made the change.
create function notify_project_member_change() returns trigger language plpgsql as $$
begin
  perform pg_notify('rcp_credentials', 'm:' || (case when tg_op = 'DELETE' then old.membership_id else new.membership_id end)::text);
  return null;
end $$;

create trigger project_members_credential_change after update on project_members for each row
  when ((old.role, old.grant_points, old.deny_points, old.expires_at, old.membership_id)
        is distinct from (new.role, new.grant_points, new.deny_points, new.expires_at, new.membership_id))
  execute function notify_project_member_change();
create trigger project_members_credential_delete after delete on project_members for each row
  execute function notify_project_member_change();
-- An insert can only widen what a token may do, but a token cached while it had no membership would not see it.
create trigger project_members_credential_insert after insert on project_members for each row
  execute function notify_project_member_change();
