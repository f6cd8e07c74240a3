-- Second factors: TOTP, recovery codes, passkeys (WebAuthn), and the sign-in challenge a session must answer.
-- No usable secret in plaintext: the TOTP seed is sealed (AES-256-GCM under the secrets-at-rest key), recovery
-- codes are stored as SHA-256 digests (each carries 80 random bits, so a digest cannot be searched), and a
-- passkey is a public key.

-- A session opened with a password by a user who has a second factor answers 401 MFA_REQUIRED until its
-- challenge is confirmed.
alter table sessions add column mfa_pending boolean not null default false;

-- One TOTP factor per user: 'pending' from enrolment start until a first valid code, then 'active'.
-- last_used_step is the 30 s step of the last accepted code: a code is never accepted twice (RFC 6238 §5.2).
create table totp_factors (
  user_id        uuid primary key references users (id) on delete cascade,
  secret_sealed  bytea not null,
  status         text not null check (status in ('pending', 'active')),
  last_used_step bigint,
  created_at     timestamptz not null default now(),
  activated_at   timestamptz
);

create table recovery_codes (
  id         uuid primary key default gen_random_uuid(),
  user_id    uuid not null references users (id) on delete cascade,
  code_hash  bytea not null unique,
  created_at timestamptz not null default now(),
  used_at    timestamptz
);
create index recovery_codes_user_idx on recovery_codes (user_id);

create table webauthn_credentials (
  id            uuid primary key default gen_random_uuid(),
  user_id       uuid not null references users (id) on delete cascade,
  credential_id text not null unique, -- base64url, as the authenticator names it
  public_key    bytea not null,
  sign_count    bigint not null,
  transports    text[] not null default '{}',
  device_type   text not null,
  backed_up     boolean not null,
  name          text,
  created_at    timestamptz not null default now(),
  last_used_at  timestamptz
);
create index webauthn_credentials_user_idx on webauthn_credentials (user_id, created_at desc, id desc);

-- Single-use WebAuthn challenges: registration (bound to a user), passwordless sign-in (bound to nobody yet).
create table webauthn_challenges (
  challenge  text primary key,
  purpose    text not null check (purpose in ('registration', 'sign_in')),
  user_id    uuid references users (id) on delete cascade,
  expires_at timestamptz not null
);
create index webauthn_challenges_expiry_idx on webauthn_challenges (expires_at);

-- The second-factor challenge of one pending session; a few wrong answers burn it (sign in again).
create table mfa_challenges (
  id                 uuid primary key default gen_random_uuid(),
  session_id         uuid not null references sessions (id) on delete cascade,
  user_id            uuid not null references users (id) on delete cascade,
  webauthn_challenge text,
  attempts           integer not null default 0,
  created_at         timestamptz not null default now(),
  expires_at         timestamptz not null,
  confirmed_at       timestamptz
);
create index mfa_challenges_session_idx on mfa_challenges (session_id);
create index mfa_challenges_expiry_idx on mfa_challenges (expires_at);

-- Wrong second-factor answers per user (challenge answers and re-authentication codes): past a budget within a
-- window they are refused for a while, so neither a stolen password nor a stolen session can grind through codes.
create table mfa_failures (
  user_id   uuid not null references users (id) on delete cascade,
  failed_at timestamptz not null default now()
);
create index mfa_failures_user_idx on mfa_failures (user_id, failed_at);
