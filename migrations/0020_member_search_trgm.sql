-- The member search (`q`: a substring of the email or display name, ILIKE) over a large tenant read every member and
-- its user; trigram indexes let the planner start from the matching users instead (pg_trgm is a trusted extension:
-- the database owner may create it).
create extension if not exists pg_trgm;
create index users_email_trgm_idx on users using gin (email gin_trgm_ops);
create index users_display_name_trgm_idx on users using gin (display_name gin_trgm_ops);
