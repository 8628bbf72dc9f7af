-- Up Migration

-- Group coordination spread over the brokers sharing the database, as Kafka
-- spreads it over the partitions of __consumer_offsets: a group belongs to
-- slot abs(javaHashCode(group id)) % 50, and each slot is leased by one
-- broker instance at a time. A broker serves a group only while it holds the
-- slot's lease; the epoch grows whenever the slot changes hands, so a broker
-- that gets a slot back knows whether another one held it meanwhile.
CREATE TABLE coordinator_slots (
  slot int PRIMARY KEY,
  node_id int NOT NULL DEFAULT -1,
  instance_id text NOT NULL DEFAULT '',
  epoch bigint NOT NULL DEFAULT 0,
  expires_at timestamptz NOT NULL DEFAULT '-infinity'
);
INSERT INTO coordinator_slots (slot) SELECT generate_series(0, 49);

-- Down Migration
DROP TABLE coordinator_slots;
