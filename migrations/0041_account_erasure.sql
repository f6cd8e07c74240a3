-- Account erasure (issue 37): the users row stays, pseudonymised (ids in audit entries, holds and created_by columns
-- keep pointing at something), with status 'erased' and the time. Its address is refused to a new account for a
-- window after the erasure; during it the address is kept only as a SHA-256 of its lowercase form, with the time it
-- becomes free again, and that row is deleted once the window has passed (by the next erasure).

alter table users drop constraint users_status_check;
alter table users add constraint users_status_check check (status in ('active', 'activation_required', 'disabled', 'erased'));
alter table users add column erased_at timestamptz;
alter table users add constraint users_erased_at_check check ((status = 'erased') = (erased_at is not null));

create table erased_addresses (
  address_hash bytea primary key,
  reusable_at  timestamptz not null
);
