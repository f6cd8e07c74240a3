-- Member search (`q`: a substring of the email or display name) reads each membership's own copy of its member's
-- email and display name, kept by triggers. Searching users instead made a tenant's search cost grow with the whole
-- platform's users: a pattern most addresses share (`example`, `gmail`) matched every user of every tenant, and the
-- count of a 100,000-member tenant's researchers read them all (272 ms with 500,000 users on the platform, 34 ms
-- from the copies). The trigram indexes move with the search, so a pattern that few members share is still found
-- from its matches.
alter table memberships add column member_email text, add column member_name text;
update memberships m set member_email = u.email, member_name = u.display_name from users u where u.id = m.user_id;
alter table memberships alter column member_email set not null;

-- A membership takes its member's current email and name as it is made (every path that makes one, SQL included).
create function memberships_copy_member() returns trigger language plpgsql as $$
begin
  select email, display_name into new.member_email, new.member_name from users where id = new.user_id;
  return new;
end $$;
create trigger memberships_copy_member before insert or update of user_id on memberships
  for each row execute function memberships_copy_member();

-- A changed email or display name reaches every membership of the account in the same transaction. These columns
-- are no part of what a token may do: the credential feed's trigger on memberships does not look at them.
create function users_copy_to_memberships() returns trigger language plpgsql as $$
begin
  update memberships set member_email = new.email, member_name = new.display_name where user_id = new.id;
  return null;
end $$;
create trigger users_copy_to_memberships after update of email, display_name on users for each row
  when ((old.email, old.display_name) is distinct from (new.email, new.display_name))
  execute function users_copy_to_memberships();

create index memberships_member_email_trgm_idx on memberships using gin (member_email gin_trgm_ops);
create index memberships_member_name_trgm_idx on memberships using gin (member_name gin_trgm_ops);
-- Only the member search used these (migration 0020).
drop index users_email_trgm_idx;
drop index users_display_name_trgm_idx;
