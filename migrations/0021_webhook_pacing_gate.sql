-- Webhook pacing (issue 22): a reserved slot only says when an attempt wakes; a late timer could then send right
-- before the next slot's attempt. The time of the endpoint's last send is the gate every send passes at the moment
-- it goes: none goes sooner than 1/rate after the one before, whatever the timers did.
alter table webhook_endpoint_pacing add column last_sent_at timestamptz;
