-- Accounts: mail outbox, password history, password resets and activations, tenant auth policy.
-- Nothing here holds a usable secret in plaintext: tokens and codes are stored as digests, and mail data that
-- carries a secret is sealed (AES-256-GCM) and dropped once the message has been sent.

-- An account created by an administrator with an initial password must choose its own at first sign-in.
alter table users add column password_change_required boolean not null default false;
-- Sessions of such an account may only read the user and change the password (INITIAL_PASSWORD_REQUIRED).
alter table sessions add column password_change_required boolean not null default false;

-- Every password a user has set, newest first; the last five are refused on reuse. Older rows are pruned.
create table password_history (
  id            bigint generated always as identity primary key,
  user_id       uuid not null references users (id) on delete cascade,
  password_hash text not null,
  created_at    timestamptz not null default now()
);
create index password_history_user_idx on password_history (user_id, id desc);

-- Single-use reset (15 minutes) and activation (7 days) grants. The link token is stored as SHA-256; the short
-- code as an HMAC under a server key, so a dump alone cannot brute-force the small code space.
create table password_resets (
  id          uuid primary key default gen_random_uuid(),
  user_id     uuid not null references users (id) on delete cascade,
  kind        text not null check (kind in ('reset', 'activation')),
  token_hash  bytea not null unique,
  code_hash   bytea,
  attempts    integer not null default 0,
  created_at  timestamptz not null default now(),
  expires_at  timestamptz not null,
  used_at     timestamptz
);
create index password_resets_user_idx on password_resets (user_id, created_at desc);

-- At most one reset request a minute per address, known or not (keyed by an HMAC of the address).
create table password_reset_throttle (
  email_key    bytea primary key,
  requested_at timestamptz not null
);
create index password_reset_throttle_at_idx on password_reset_throttle (requested_at);

-- The transactional outbox: a row commits with the change that causes the mail; a Temporal workflow
-- (mail/<id>) sends it and marks it sent. `sealed_data` holds the template data encrypted; it is cleared on send.
create table mail_outbox (
  id           uuid primary key default gen_random_uuid(),
  tenant_id    uuid references tenants (id) on delete cascade,
  recipient    text not null,
  template     text not null,
  sealed_data  bytea,
  created_at   timestamptz not null default now(),
  sent_at      timestamptz,
  failed_at    timestamptz,
  last_error   text
);
create index mail_outbox_pending_idx on mail_outbox (created_at) where sent_at is null and failed_at is null;

-- One row per tenant once its policy was changed; a tenant without a row has the defaults (version 1).
create table tenant_auth_policies (
  tenant_id                uuid primary key references tenants (id) on delete cascade,
  mfa_required             boolean not null,
  allowed_sign_in_methods  text[] not null,
  password_min_length      integer not null,
  session_absolute_minutes integer not null,
  session_idle_minutes     integer not null,
  sso_enforced             boolean not null,
  allowed_email_domains    text[] not null,
  version                  bigint not null default 1,
  updated_at               timestamptz not null default now()
);
-- GET /auth/login-options finds the tenants claiming an email domain.
create index tenant_auth_policies_domains_idx on tenant_auth_policies using gin (allowed_email_domains);
