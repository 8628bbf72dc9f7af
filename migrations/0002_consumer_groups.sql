-- Up Migration

-- A classic group's state as of its last completed rebalance (or its last
-- change to Empty): a restarted coordinator restores it and the members go
-- on heartbeating with the same generation, as Kafka's __consumer_offsets
-- group metadata records allow.
CREATE TABLE groups (
  group_id text PRIMARY KEY,
  protocol_type text,
  protocol_name text,
  generation int NOT NULL DEFAULT 0,
  leader_id text,
  state text NOT NULL,
  state_since timestamptz NOT NULL DEFAULT now(),
  members jsonb NOT NULL DEFAULT '[]'
);

-- Committed offsets: one row per (group, topic, partition). Keyed by topic
-- name, as Kafka's offset commits are; deleted with the topic.
CREATE TABLE committed_offsets (
  group_id text NOT NULL,
  topic text NOT NULL,
  partition int NOT NULL,
  committed_offset bigint NOT NULL,
  leader_epoch int NOT NULL DEFAULT -1,
  metadata text,
  commit_timestamp timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (group_id, topic, partition)
);
CREATE INDEX committed_offsets_topic ON committed_offsets (topic);

-- Down Migration
DROP TABLE committed_offsets;
DROP TABLE groups;
