-- A person's own data export (GET /v1/users/me/export) lists the audit entries they acted in, in any tenant's chain
-- and their own: by actor, newest first. Partial: system and anonymous entries have no actor id.
create index audit_log_actor_time_idx on audit_log (actor_id, occurred_at desc, id desc) where actor_id is not null;
