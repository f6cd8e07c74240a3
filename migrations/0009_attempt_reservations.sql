-- A second-factor answer now takes its slot of the failure budget before it is checked, and a right answer gives
-- that slot back: the id names the slot to give back.
alter table mfa_failures add column id bigint generated always as identity primary key;
