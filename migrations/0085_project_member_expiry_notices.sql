-- The expiry warning of a project membership (issue 36): the expiresAt it was last given for. A membership is due a
-- warning while its expiresAt is within 7 days and differs from this, so each expiry is warned once, and moving the
-- expiry (PATCH) makes a warning due again for the new date. Not part of what a membership grants: the credential
-- triggers of migration 0030 do not fire on it.
alter table project_members add column expiry_warned_for timestamptz;
