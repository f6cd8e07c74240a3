-- Audit log exports (issue 18): one row per requested export of a tenant's trail over a window, written by one
-- workflow (workflows/audit-export.ts) as gzip NDJSON into the tenant's export bucket. The row carries what a
-- reader needs to trust the file: its SHA-256 and size, and the chain head it was cut at. Unlike audit_log, an
-- export belongs to the tenant and goes with it.
create table audit_exports (
  id               uuid primary key,
  tenant_id        uuid not null references tenants (id) on delete cascade,
  from_at          timestamptz not null,
  to_at            timestamptz not null,
  status           text not null default 'queued' check (status in ('queued', 'running', 'succeeded', 'failed')),
  entries_written  bigint not null default 0,
  bytes            bigint,
  sha256           text,
  region_id        text,
  bucket           text,
  object_key       text,
  -- The chain's head when the export was cut: the file holds no entry after it.
  chain_head_seq   bigint,
  chain_head_hash  text,
  error            text,
  requested_by     uuid references users (id) on delete set null,
  workflow_id      text not null,
  created_at       timestamptz not null default now(),
  finished_at      timestamptz,
  check (from_at < to_at),
  check ((status = 'failed') = (error is not null)),
  check ((status = 'succeeded') = (sha256 is not null and bytes is not null and object_key is not null))
);
create index audit_exports_tenant_idx on audit_exports (tenant_id, created_at desc, id desc);

-- The retention purges of the housekeeping workflow walk these, oldest first, a batch at a time (audit_log has its
-- own time index). Dispatched events only: an undispatched one is still owed to the dispatcher.
create index events_dispatched_time_idx on events (occurred_at) where dispatched_at is not null;
create index webhook_messages_created_idx on webhook_messages (created_at);
