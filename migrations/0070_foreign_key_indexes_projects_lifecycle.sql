-- The foreign keys the projects, notifications, legal-hold, offboarding and usage tables brought, each with an index leading with its
-- columns (as 0029 did for the older ones, and for the same reason): a project, user or tenant deleted, by a deletion
-- job or its cascade, must not read these tables whole once per row. test/platform/foreign-key-indexes.test.ts.
create index api_keys_tenant_project on api_keys (tenant_id, project_id) where project_id is not null;
create index legal_holds_tenant_project on legal_holds (tenant_id, project_id) where project_id is not null;
create index notification_watches_user on notification_watches (user_id);
create index notification_watches_tenant on notification_watches (tenant_id);
create index notifications_tenant on notifications (tenant_id) where tenant_id is not null;
create index project_members_granted_by on project_members (granted_by) where granted_by is not null;
create index project_members_tenant_project on project_members (tenant_id, project_id);
create index project_members_user on project_members (user_id);
create index tenant_offboarding_requests_requested_by on tenant_offboarding_requests (requested_by);
create index tenant_offboarding_requests_cancelled_by on tenant_offboarding_requests (cancelled_by) where cancelled_by is not null;
create index usage_events_tenant_project on usage_events (tenant_id, project_id) where project_id is not null;
