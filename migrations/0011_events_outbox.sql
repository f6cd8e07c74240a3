-- The event outbox (issues 13 and 14). A producer writes its event in the same transaction as the change it
-- reports (api/events publishEvent), so a rolled-back change publishes nothing and a committed one is never lost.
-- The webhook dispatcher moves rows into delivery workflows and stamps dispatched_at.
create table events (
  id            uuid primary key default gen_random_uuid(),
  tenant_id     uuid not null references tenants (id) on delete cascade,
  type          text not null,
  data          jsonb not null,
  occurred_at   timestamptz not null default now(),
  dispatched_at timestamptz
);
-- The dispatcher's queue: only undispatched rows, oldest first.
create index events_undispatched_idx on events (occurred_at, id) where dispatched_at is null;
create index events_tenant_idx on events (tenant_id, occurred_at desc, id desc);

-- Wakes the dispatcher at commit (NOTIFY is delivered only when the transaction commits). One payload for
-- all rows, so a burst in one transaction folds into one notification.
create function notify_event_published() returns trigger language plpgsql as $$
begin
  perform pg_notify('rcp_events', '');
  return null;
end $$;
create trigger events_published after insert on events for each row execute function notify_event_published();
