-- Who may claim an account through single sign-on (issue 12): the connection that created an account, and the
-- email domains a tenant has proven it controls (a DNS TXT record), are what an asserted identity is judged by.
alter table users add column created_by_sso_connection_id uuid references sso_connections (id) on delete set null;

-- Linked identities are listed and removed by their owner, so each link gets an id of its own.
alter table sso_identities add column id uuid not null default gen_random_uuid();
create unique index sso_identities_id_key on sso_identities (id);
create index sso_identities_user_idx on sso_identities (user_id, created_at desc, id desc);

create table tenant_domains (
  id              uuid primary key default gen_random_uuid(),
  tenant_id       uuid not null references tenants (id) on delete cascade,
  domain          text not null,
  challenge_token text not null,
  verified_at     timestamptz,
  created_at      timestamptz not null default now(),
  unique (tenant_id, domain)
);
create index tenant_domains_tenant_idx on tenant_domains (tenant_id, created_at desc, id desc);
-- One tenant at a time holds a verified domain: the first to prove control keeps it until it deletes the claim.
create unique index tenant_domains_verified_key on tenant_domains (domain) where verified_at is not null;
