-- Up Migration

-- Partition leadership spread over the brokers sharing the database: a
-- partition is led by the broker instance named here while that instance's
-- registration (brokers.last_seen) is live and it has a session open on the
-- database; the leader is the only broker that serves the partition's
-- client requests (Produce, Fetch, ListOffsets, OffsetForLeaderEpoch,
-- DeleteRecords). leader_epoch (0001) grows whenever another instance takes
-- the partition, as Kafka's leader epoch grows with every election.
-- leader_instance '' is a partition nobody leads (new, or handed over);
-- leader_node_id then keeps the last leader, -1 for never led.
ALTER TABLE partitions
  ADD COLUMN leader_node_id int NOT NULL DEFAULT -1,
  ADD COLUMN leader_instance text NOT NULL DEFAULT '';

-- Down Migration
ALTER TABLE partitions DROP COLUMN leader_instance, DROP COLUMN leader_node_id;
