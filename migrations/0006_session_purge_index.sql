-- The housekeeping purge looks for sessions revoked long ago; without this it scans the whole table.
create index sessions_revoked_idx on sessions (revoked_at) where revoked_at is not null;
