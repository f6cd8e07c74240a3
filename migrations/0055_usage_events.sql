-- Usage events (issue 38): what a tenant used, written in the same transaction as the work it measures. An event is
-- unique per tenant and idempotency key; the payload hash lets a replay be told from a different event reusing the
-- key (counted once versus refused). Quantities are whole units of the meter's unit (bigint, never floating point).
-- project_id is null where the measured work names no project; the composite key keeps it inside the tenant.

create table usage_events (
  id              bigint generated always as identity primary key,
  tenant_id       uuid not null references tenants (id) on delete cascade,
  project_id      uuid,
  meter           text not null check (meter ~ '^[a-z_]+\.[a-z_]+$'),
  quantity        bigint not null check (quantity >= 0),
  -- What a unique-count meter counts distinct values of (a model version id, ...); null for the other aggregations.
  subject         text,
  occurred_at     timestamptz not null,
  idempotency_key text not null check (length(idempotency_key) between 1 and 255),
  payload_hash    bytea not null check (length(payload_hash) = 32),
  recorded_at     timestamptz not null default now(),
  unique (tenant_id, idempotency_key),
  foreign key (tenant_id, project_id) references projects (tenant_id, id)
);
-- One tenant's window, any meter: the summary reads only the index (meter, project and quantity are included).
create index usage_events_tenant_time_idx on usage_events (tenant_id, occurred_at) include (meter, project_id, quantity, subject);
