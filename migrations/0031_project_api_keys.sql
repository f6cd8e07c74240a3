-- Project-scoped personal access tokens (issue 36): a token made with a projectId acts only inside that project.
-- Null for every existing and every tenant-wide token. What it may do there is its scopes ∩ what its member holds in
-- the project, worked out from project_members on every use (its changes evict the cached token, migration 0030).
alter table api_keys add column project_id uuid;
alter table api_keys add constraint api_keys_project_fk foreign key (tenant_id, project_id) references projects (tenant_id, id) on delete cascade;
create index api_keys_project_idx on api_keys (project_id) where project_id is not null;
