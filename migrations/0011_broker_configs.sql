-- Up Migration

-- Dynamic broker configs (Kafka's KIP-226), set with AlterConfigs and
-- IncrementalAlterConfigs: one row per config resource, named as Kafka names
-- it, '' for the cluster-wide default and a node id for one broker. The
-- values are kept as the client sent them; every broker sharing the database
-- reads them at start-up and again on NOTIFY.
CREATE TABLE broker_configs (
  resource_name text PRIMARY KEY,
  configs jsonb NOT NULL DEFAULT '{}'
);

-- Down Migration
DROP TABLE broker_configs;
