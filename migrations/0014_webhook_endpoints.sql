-- Webhook endpoints (issue 14): where a tenant wants its events delivered. The signing secret must be used again
-- at every delivery, so it is sealed (AES-256-GCM under the secrets-at-rest key), never stored in the clear.
-- After a rotation the previous secret keeps signing beside the new one until previous_secret_expires_at.
create table webhook_endpoints (
  id                         uuid primary key default gen_random_uuid(),
  tenant_id                  uuid not null references tenants (id) on delete cascade,
  url                        text not null,
  events                     text[] not null check (cardinality(events) > 0),
  description                text,
  enabled                    boolean not null default true,
  disabled_reason            text check (disabled_reason in ('gone', 'failing', 'manual')),
  disabled_at                timestamptz,
  rate_limit_per_second      integer check (rate_limit_per_second between 1 and 1000),
  secret_sealed              bytea not null,
  previous_secret_sealed     bytea,
  previous_secret_expires_at timestamptz,
  version                    bigint not null default 1,
  created_at                 timestamptz not null default now(),
  updated_at                 timestamptz not null default now(),
  -- A disabled endpoint says why and since when; an enabled one carries neither.
  check ((enabled and disabled_reason is null and disabled_at is null) or (not enabled and disabled_reason is not null and disabled_at is not null))
);
create index webhook_endpoints_tenant_idx on webhook_endpoints (tenant_id, created_at desc, id desc);
-- The dispatcher's question: which enabled endpoints of this tenant take this event type.
create index webhook_endpoints_subscribed_idx on webhook_endpoints using gin (events) where enabled;
