-- A member removed from the tenant leaves every project of it (issue 36). Removal is soft (status 'removed') and a
-- later invitation reactivates the same memberships row, so without this the old project memberships, overlays
-- included, would come back with it. A trigger, so every path that removes a member (the API, an operator's SQL)
-- does it; the project_members delete trigger (0030) then announces it to the PAT caches.
create function leave_projects_on_removal() returns trigger language plpgsql as $$
begin
  delete from project_members where membership_id = new.id;
  return null;
end $$;

create trigger memberships_leave_projects after update of status on memberships for each row
  when (new.status = 'removed' and old.status is distinct from 'removed')
  execute function leave_projects_on_removal();
