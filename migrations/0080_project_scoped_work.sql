-- What a project scopes (issue 36): embodiment profiles, training jobs, model versions and edge packages may belong to
-- one project of their tenant. Null is tenant-wide, as every existing row stays. The key pairs the project with the
-- row's own tenant, so no row can name another tenant's project. Projects are archived, never deleted, while their
-- tenant lives (the deletion job removes these tables before projects), so the key restricts rather than cascades.
alter table embodiment_profiles add column project_id uuid;
alter table embodiment_profiles add constraint embodiment_profiles_project_fk foreign key (tenant_id, project_id) references projects (tenant_id, id);
alter table training_jobs add column project_id uuid;
alter table training_jobs add constraint training_jobs_project_fk foreign key (tenant_id, project_id) references projects (tenant_id, id);
alter table model_versions add column project_id uuid;
alter table model_versions add constraint model_versions_project_fk foreign key (tenant_id, project_id) references projects (tenant_id, id);
alter table edge_packages add column project_id uuid;
alter table edge_packages add constraint edge_packages_project_fk foreign key (tenant_id, project_id) references projects (tenant_id, id);

-- One project's page of each list, newest first (keyset on created_at, id); they also serve the keys' checks. Partial:
-- tenant-wide rows, the many, are listed through the tables' existing (tenant_id, created_at, id) indexes.
create index embodiment_profiles_project_idx on embodiment_profiles (tenant_id, project_id, created_at desc, id desc) where project_id is not null;
create index training_jobs_project_idx on training_jobs (tenant_id, project_id, created_at desc, id desc) where project_id is not null;
create index model_versions_project_idx on model_versions (tenant_id, project_id, created_at desc, id desc) where project_id is not null;
create index edge_packages_project_idx on edge_packages (tenant_id, project_id, created_at desc, id desc) where project_id is not null;
