-- An audit entry names the trace of the request that wrote it (issue 35), beside its request id: from an entry an
-- operator finds the request's spans, down to its SQL and the workflows it started (docs/operations.md "Traces"). Null when the
-- API does not trace, and for the platform's own entries.
--
-- It is operational metadata, not evidence: the API, the export and the audit.entry event do not show it, and the
-- hash does not cover it (audit_canonical is unchanged, so every verifier written against it keeps working).
-- The column is added to the inbox too, last in both tables: the seal moves whole rows from one to the other.
alter table audit_log add column trace_id text;
alter table audit_inbox add column trace_id text;
