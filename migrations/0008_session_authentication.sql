-- How each session was authenticated, so a tenant's policy (allowed methods, SSO enforcement, MFA) can be applied
-- whenever the session lands in or switches to a membership, and when the user last proved their presence, for
-- the changes that demand a recent authentication.
alter table sessions
  add column auth_method text not null default 'password' check (auth_method in ('password', 'passkey', 'sso')),
  add column sso_connection_id uuid references sso_connections (id) on delete set null,
  add column second_factor_at timestamptz,
  add column authenticated_at timestamptz not null default now();
