-- After a tenant deletion (issue 37) and for the 401 set's two codes (issue 36).
--
-- tenant_tombstones: one row per deleted tenant, written in the deletion's last commit (with the tenant row's
-- delete), so the id keeps answering 404 TENANT_NOT_FOUND where a request names it. Nothing personal: the id, when,
-- and which deletion job and signed receipt prove it. Kept for good: a few dozen bytes per deleted tenant, and the
-- receipt it names is kept in the audit trail.
--
-- retired_credentials: the SHA-256 of a credential whose row was destroyed (a tenant deletion's PATs, an erased
-- account's PATs and sessions), so a token presented later answers TOKEN_NOT_FOUND ("its record no longer exists")
-- rather than the generic UNAUTHORIZED, which the published rule allows only for a digest we did store. No tenant,
-- user or credential id: the digest cannot be tied back to anyone, so an erasure stays an erasure. Kept until the
-- credential would have expired by itself (expires_at); housekeeping purges it after that.
create table tenant_tombstones (
  tenant_id       uuid primary key,
  deleted_at      timestamptz not null default now(),
  deletion_job_id uuid not null,
  receipt_sha256  text not null
);

create table retired_credentials (
  digest     bytea primary key,
  retired_at timestamptz not null default now(),
  reason     text not null check (reason in ('tenant_deleted', 'account_erased')),
  expires_at timestamptz not null
);
create index retired_credentials_expiry_idx on retired_credentials (expires_at);
