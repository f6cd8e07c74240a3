-- The device authorization grant (RFC 8628, api/device-authorizations): a terminal or robot asks, a person approves
-- or denies in the console, the device polls for its token. Neither code is stored, only its SHA-256; no token is
-- stored either: the PAT is minted when the device collects it (api_key_id then names it).
create table device_authorizations (
  id               uuid primary key default gen_random_uuid(),
  device_code_hash bytea not null unique,
  user_code_hash   bytea not null unique,
  client_name      text not null,
  scopes           text[] not null,
  client_ip        text,
  created_at       timestamptz not null default now(),
  expires_at       timestamptz not null,
  -- The polling interval in seconds: each slow_down answer adds 5 (RFC 8628 section 3.5).
  interval_seconds integer not null default 5,
  last_polled_at   timestamptz,
  status           text not null default 'pending' check (status in ('pending', 'approved', 'denied', 'delivered')),
  -- Who decided, and for an approval the membership (so the tenant) the token acts in. No tenant_id column: the row
  -- belongs to no tenant until approved, and goes with the membership (a tenant deletion removes its memberships).
  user_id          uuid references users (id) on delete cascade,
  membership_id    uuid references memberships (id) on delete cascade,
  decided_at       timestamptz,
  api_key_id       uuid references api_keys (id) on delete set null,
  check ((status = 'pending') = (user_id is null)),
  check (status not in ('approved', 'delivered') or membership_id is not null)
);

create index device_authorizations_expires_idx on device_authorizations (expires_at);
create index device_authorizations_user_idx on device_authorizations (user_id) where user_id is not null;
create index device_authorizations_membership_idx on device_authorizations (membership_id) where membership_id is not null;
create index device_authorizations_api_key_idx on device_authorizations (api_key_id) where api_key_id is not null;
