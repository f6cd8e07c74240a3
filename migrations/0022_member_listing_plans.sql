-- Member pages of a large tenant (100,000 members), two plans that read most of it:
-- 1. Sorted by display name (the console's column sort), every match was sorted: 55 ms for the 10,000 disabled
--    members. An index on the sort key lets the planner walk users in that order and stop at a page, as it already
--    does for the email sort (users_email_key on lower(email)).
create index users_display_name_sort_idx on users ((coalesce(lower(display_name), '')));

-- 2. A search of a thousand matches joined them to the tenant's memberships by scanning all of them (52 ms) rather
--    than probing the (tenant_id, user_id) index a thousand times (10 ms): at the default random_page_cost (4, a
--    spinning disk) a probe looks four times dearer than it is with the working set in memory or on SSD. 1.1 is the
--    usual setting there. It is the database's default for new sessions; a role that may not alter the database
--    keeps the server's value (an operator may set it in postgresql.conf instead).
do $$
begin
  execute format('alter database %I set random_page_cost = 1.1', current_database());
exception when insufficient_privilege then
  raise notice 'random_page_cost left at the server''s value: this role may not alter database %', current_database();
end $$;
