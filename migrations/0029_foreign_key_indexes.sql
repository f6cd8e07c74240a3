-- Every foreign key gets an index that leads with its column. Without one, deleting a referenced row (a tenant, a
-- user, a membership) reads the whole referencing table once per deleted row to cascade or to check it, and holds
-- its locks for that long: a tenant's deletion cascades through memberships to sessions, and a user's through its
-- challenges. test/platform/foreign-key-indexes.test.ts keeps it so for every key added later.
create index audit_exports_requested_by on audit_exports (requested_by);
create index mail_outbox_tenant on mail_outbox (tenant_id);
create index mfa_challenges_user on mfa_challenges (user_id);
create index model_versions_training_job on model_versions (tenant_id, training_job_id) where training_job_id is not null;
create index sessions_membership on sessions (membership_id);
create index sessions_sso_connection on sessions (sso_connection_id);
create index sso_login_states_connection on sso_login_states (connection_id);
create index sso_login_states_link_user on sso_login_states (link_user_id);
create index storage_reconciliation_findings_tenant on storage_reconciliation_findings (tenant_id);
create index storage_reconciliation_jobs_created_by on storage_reconciliation_jobs (created_by);
create index tenant_invitations_accepted_by on tenant_invitations (accepted_by);
create index tenant_invitations_invited_by on tenant_invitations (invited_by);
create index users_created_by_sso_connection on users (created_by_sso_connection_id);
create index webauthn_challenges_user on webauthn_challenges (user_id);
create index webhook_messages_tenant on webhook_messages (tenant_id);
