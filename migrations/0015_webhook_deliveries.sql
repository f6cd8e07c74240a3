-- Webhook delivery (issue 14): one message per (event, endpoint), its attempts, and each endpoint's pacing slot.
-- The dispatcher writes a message and stamps the event dispatched in one transaction, so an event fans out once;
-- started_at marks that its delivery workflow was started (a crash between commit and start leaves it null, and
-- the dispatcher starts it on its next pass).
create table webhook_messages (
  id              uuid primary key default gen_random_uuid(),
  tenant_id       uuid not null references tenants (id) on delete cascade,
  endpoint_id     uuid not null references webhook_endpoints (id) on delete cascade,
  event_id        uuid not null references events (id) on delete cascade,
  event_type      text not null,
  status          text not null default 'pending' check (status in ('pending', 'succeeded', 'failed')),
  attempt_count   integer not null default 0,
  -- Each redelivery starts one more workflow run for the message (same webhook-id); its number is in the run's id.
  redeliveries    integer not null default 0,
  last_attempt_at timestamptz,
  started_at      timestamptz,
  created_at      timestamptz not null default now(),
  unique (event_id, endpoint_id)
);
create index webhook_messages_endpoint_idx on webhook_messages (endpoint_id, created_at desc, id desc);
create index webhook_messages_unstarted_idx on webhook_messages (created_at) where started_at is null;

create table webhook_attempts (
  id              uuid primary key default gen_random_uuid(),
  message_id      uuid not null references webhook_messages (id) on delete cascade,
  endpoint_id     uuid not null references webhook_endpoints (id) on delete cascade,
  attempted_at    timestamptz not null,
  succeeded       boolean not null,
  response_status integer,
  duration_ms     integer not null,
  -- The first 1 KiB of the response, for the tenant's debugging; never more.
  response_body   text,
  error_class     text
);
create index webhook_attempts_message_idx on webhook_attempts (message_id, attempted_at, id);
-- "Has every attempt of this endpoint failed for N days": the newest success and the oldest failure after it.
create index webhook_attempts_endpoint_idx on webhook_attempts (endpoint_id, attempted_at);

-- The next free send slot of an endpoint with a rate limit: one row, moved forward atomically by every attempt,
-- so the spacing holds across workers.
create table webhook_endpoint_pacing (
  endpoint_id  uuid primary key references webhook_endpoints (id) on delete cascade,
  next_slot_at timestamptz not null
);
