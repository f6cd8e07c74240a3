-- Tenancy: membership listing indexes, tenant and registration invitations, and OIDC single sign-on.
-- Invitation tokens are stored as SHA-256 digests only; SSO client secrets are sealed (AES-256-GCM).

-- The membership list pages on (created_at, id) within a tenant.
create index memberships_tenant_created_idx on memberships (tenant_id, created_at, id);
create index memberships_tenant_expiry_idx on memberships (tenant_id, expires_at) where expires_at is not null;

-- meta.totalCount without scanning a large tenant: members per (tenant, role, stored status), kept by triggers in
-- the same transaction as the change. Memberships whose expires_at has passed are still stored 'active'; the
-- count subtracts them with the expiry index above (few rows), so totals stay exact.
create table membership_counts (
  tenant_id uuid not null references tenants (id) on delete cascade,
  role      text not null,
  status    text not null,
  n         bigint not null,
  primary key (tenant_id, role, status)
);

create function membership_counts_track() returns trigger language plpgsql as $$
begin
  if tg_op in ('UPDATE', 'DELETE') then
    update membership_counts set n = n - 1 where tenant_id = old.tenant_id and role = old.role and status = old.status;
  end if;
  if tg_op in ('INSERT', 'UPDATE') then
    insert into membership_counts (tenant_id, role, status, n) values (new.tenant_id, new.role, new.status, 1)
    on conflict (tenant_id, role, status) do update set n = membership_counts.n + 1;
  end if;
  return null;
end $$;

create trigger membership_counts_insert_delete after insert or delete on memberships
  for each row execute function membership_counts_track();
create trigger membership_counts_update after update of tenant_id, role, status on memberships
  for each row when ((old.tenant_id, old.role, old.status) is distinct from (new.tenant_id, new.role, new.status))
  execute function membership_counts_track();

insert into membership_counts (tenant_id, role, status, n)
  select tenant_id, role, status, count(*) from memberships group by tenant_id, role, status;
create index api_keys_user_tenant_idx on api_keys (user_id, tenant_id, created_at desc, id desc);

create table tenant_invitations (
  id           uuid primary key default gen_random_uuid(),
  tenant_id    uuid not null references tenants (id) on delete cascade,
  email        text not null,
  role         text not null check (role in ('owner', 'admin', 'researcher', 'billing_admin', 'viewer')),
  token_hash   bytea not null unique,
  invited_by   uuid references users (id) on delete set null,
  expires_at   timestamptz not null,
  accepted_at  timestamptz,
  accepted_by  uuid references users (id) on delete set null,
  revoked_at   timestamptz,
  created_at   timestamptz not null default now()
);
create index tenant_invitations_tenant_idx on tenant_invitations (tenant_id, created_at desc, id desc);
-- At most one open invitation per address and tenant: a new one supersedes (revokes) the old one.
create unique index tenant_invitations_open_key on tenant_invitations (tenant_id, lower(email))
  where accepted_at is null and revoked_at is null;

create table registration_invitations (
  id            uuid primary key default gen_random_uuid(),
  email         text not null,
  token_hash    bytea not null unique,
  expires_at    timestamptz not null,
  completed_at  timestamptz,
  created_at    timestamptz not null default now()
);
create index registration_invitations_email_idx on registration_invitations (lower(email));

create table sso_connections (
  id                   uuid primary key default gen_random_uuid(),
  tenant_id            uuid not null references tenants (id) on delete cascade,
  protocol             text not null default 'oidc' check (protocol in ('oidc')),
  name                 text not null,
  issuer               text not null,
  client_id            text not null,
  client_secret_sealed bytea not null,
  email_domains        text[] not null default '{}',
  default_role         text not null check (default_role in ('admin', 'researcher', 'billing_admin', 'viewer')),
  enabled              boolean not null default true,
  version              bigint not null default 1,
  created_at           timestamptz not null default now(),
  updated_at           timestamptz not null default now()
);
create index sso_connections_tenant_idx on sso_connections (tenant_id, created_at desc, id desc);

-- Links an external identity (issuer + subject) to an account once, so later sign-ins need no email match.
create table sso_identities (
  connection_id uuid not null references sso_connections (id) on delete cascade,
  subject       text not null,
  user_id       uuid not null references users (id) on delete cascade,
  created_at    timestamptz not null default now(),
  primary key (connection_id, subject)
);

-- One row per started sign-in: state, nonce and PKCE verifier live server-side, single use, short-lived.
create table sso_login_states (
  state_hash     bytea primary key,
  connection_id  uuid not null references sso_connections (id) on delete cascade,
  nonce          text not null,
  code_verifier  text not null,
  return_to      text,
  -- Set when a signed-in user starts the flow to link this identity to their account.
  link_user_id   uuid references users (id) on delete cascade,
  expires_at     timestamptz not null,
  created_at     timestamptz not null default now()
);
