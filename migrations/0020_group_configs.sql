-- Up Migration

-- Group configs (KIP-848's config resource type GROUP): the configs set on one
-- group with AlterConfigs or IncrementalAlterConfigs, as the client sent them.
-- Kafka keeps them in its metadata log as ConfigRecords of resource type
-- GROUP; a group with none set has no row. They outlive the group itself, as
-- on Kafka (a config may be set before the group exists).
CREATE TABLE group_configs (
  group_id text PRIMARY KEY,
  configs jsonb NOT NULL DEFAULT '{}'
);

-- Down Migration
DROP TABLE group_configs;
