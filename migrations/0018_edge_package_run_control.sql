-- Chunked control on the robot: what the control loop did. Null for runs reported by packages built before it.
alter table edge_package_runs
  add column inferences         integer check (inferences >= 0),
  add column underruns          integer check (underruns >= 0),
  add column queue_depth_max    integer check (queue_depth_max >= 0),
  add column queue_depth_mean   double precision,
  add column loop_jitter_p99_ms double precision;
