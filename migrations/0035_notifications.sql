-- Notifications (issue 36): a user's inbox across tenants, written by api/notifications/queries.ts alone.
--
-- notification_inboxes holds one row a user: the last sequence number given out, the highest the user has been shown
-- (seen_seq) and the unread count. Every new notification takes the next number while it holds this row's lock, so
-- numbers are given in commit order: a read-all "up to number N" can never reach a notification that committed after
-- the one the client saw as N. The count is kept here so GET .../count reads one row whatever the inbox's size.
create table notification_inboxes (
  user_id      uuid primary key references users (id) on delete cascade,
  last_seq     bigint not null default 0,
  seen_seq     bigint not null default 0,
  unread_count bigint not null default 0,
  check (unread_count >= 0 and seen_seq <= last_seq)
);

-- fields: the kind's declared fields (api/notifications/kinds.ts), never a secret, code or token.
-- read_at is null exactly while unread; archiving also marks read (archived implies read).
create table notifications (
  id          uuid primary key default gen_random_uuid(),
  user_id     uuid not null references users (id) on delete cascade,
  seq         bigint not null,
  tenant_id   uuid references tenants (id) on delete cascade,
  kind        text not null,
  fields      jsonb not null,
  dedupe_key  text not null,
  created_at  timestamptz not null default now(),
  read_at     timestamptz,
  archived_at timestamptz,
  check (archived_at is null or read_at is not null),
  unique (user_id, seq),
  unique (user_id, dedupe_key)
);
create index notifications_tenant_idx on notifications (user_id, tenant_id, seq desc);

-- Mail per kind; a kind without a row takes its declared default.
create table notification_preferences (
  user_id    uuid not null references users (id) on delete cascade,
  kind       text not null,
  mail       boolean not null,
  updated_at timestamptz not null default now(),
  primary key (user_id, kind)
);

-- The last mail of a kind to a user, in database time: at most one an hour.
create table notification_mail_throttle (
  user_id        uuid not null references users (id) on delete cascade,
  kind           text not null,
  last_mailed_at timestamptz not null,
  primary key (user_id, kind)
);

-- Who asked for work that finishes later (a package build, a model version's validation): the finish notifies them.
create table notification_watches (
  id         uuid primary key default gen_random_uuid(),
  subject    text not null,
  user_id    uuid not null references users (id) on delete cascade,
  tenant_id  uuid not null references tenants (id) on delete cascade,
  created_at timestamptz not null default now(),
  unique (subject, user_id)
);

-- The clients a user signed in from: a user-agent family and a network (IPv4 /24, IPv6 /48), last seen when.
create table notification_known_clients (
  user_id      uuid not null references users (id) on delete cascade,
  client_key   text not null,
  last_seen_at timestamptz not null,
  primary key (user_id, client_key)
);
