-- Up Migration

-- Producer ids (InitProducerId): unique across every broker sharing the database.
CREATE SEQUENCE producer_ids START 1000;

-- An idempotent producer's state on a partition is read back from its
-- newest batches (epoch, sequences, offsets), as Kafka rebuilds it from the log.
CREATE INDEX batches_producer ON batches (topic_id, partition, producer_id, base_offset) WHERE producer_id >= 0;

-- Down Migration
DROP INDEX batches_producer;
DROP SEQUENCE producer_ids;
