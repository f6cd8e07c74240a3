-- Identity core that the authentication plugin resolves against, and the idempotency store.
-- Later migrations extend these tables; none of them holds a secret in plaintext.

create table users (
  id            uuid primary key default gen_random_uuid(),
  email         text not null,
  display_name  text,
  password_hash text,
  status        text not null default 'active' check (status in ('active', 'activation_required', 'disabled')),
  version       bigint not null default 1,
  created_at    timestamptz not null default now(),
  updated_at    timestamptz not null default now()
);
create unique index users_email_key on users (lower(email));

create table tenants (
  id         uuid primary key default gen_random_uuid(),
  name       text not null,
  slug       text not null unique,
  version    bigint not null default 1,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table memberships (
  id         uuid primary key default gen_random_uuid(),
  tenant_id  uuid not null references tenants (id) on delete cascade,
  user_id    uuid not null references users (id) on delete cascade,
  role       text not null check (role in ('owner', 'admin', 'researcher', 'billing_admin', 'viewer')),
  status     text not null default 'active' check (status in ('active', 'disabled', 'expired', 'removed')),
  expires_at timestamptz,
  version    bigint not null default 1,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (tenant_id, user_id)
);
create index memberships_user_idx on memberships (user_id);

create table sessions (
  id                    uuid primary key default gen_random_uuid(),
  user_id               uuid not null references users (id) on delete cascade,
  token_hash            bytea not null unique,
  membership_id         uuid references memberships (id) on delete set null,
  user_agent            text,
  ip                    text,
  created_at            timestamptz not null default now(),
  last_seen_at          timestamptz not null default now(),
  expires_at            timestamptz not null,
  idle_timeout_seconds  integer not null,
  revoked_at            timestamptz
);
create index sessions_user_idx on sessions (user_id, created_at desc, id desc);
create index sessions_expiry_idx on sessions (expires_at);

create table api_keys (
  id             uuid primary key default gen_random_uuid(),
  tenant_id      uuid not null references tenants (id) on delete cascade,
  user_id        uuid not null references users (id) on delete cascade,
  membership_id  uuid not null references memberships (id) on delete cascade,
  name           text not null,
  token_hash     bytea not null unique,
  display_prefix text not null,
  scopes         text[] not null,
  created_at     timestamptz not null default now(),
  expires_at     timestamptz not null,
  revoked_at     timestamptz,
  last_used_at   timestamptz
);
create index api_keys_tenant_idx on api_keys (tenant_id, created_at desc, id desc);
create index api_keys_membership_idx on api_keys (membership_id);

-- One row per (scope, key): scope is the tenant (or user, or public operation) the key is unique within.
create table idempotency_keys (
  scope            text not null,
  key              text not null,
  request_hash     text not null,
  state            text not null check (state in ('in_flight', 'completed')),
  locked_until     timestamptz,
  response_status  integer,
  response_body    bytea,
  created_at       timestamptz not null default now(),
  expires_at       timestamptz not null,
  primary key (scope, key)
);
create index idempotency_keys_expiry_idx on idempotency_keys (expires_at);
