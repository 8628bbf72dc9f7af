-- Up Migration

-- The transaction coordinator's state: one row per transactional id, written
-- at every state change (Kafka keeps it in __transaction_state). A restarted
-- broker reads it back and completes any transaction it finds in
-- PrepareCommit/PrepareAbort before it serves requests.
CREATE TABLE transactions (
  transactional_id text PRIMARY KEY,
  producer_id bigint NOT NULL,
  producer_epoch smallint NOT NULL,
  last_producer_epoch smallint NOT NULL DEFAULT -1,
  timeout_ms int NOT NULL,
  -- Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort
  state text NOT NULL,
  -- When the ongoing transaction began (its timeout runs from here).
  start_time timestamptz,
  -- The transaction's partitions: [{"topicId", "topic", "partition"}].
  partitions jsonb NOT NULL DEFAULT '[]',
  -- Groups whose offsets the transaction carries (AddOffsetsToTxn).
  groups text[] NOT NULL DEFAULT '{}',
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX transactions_producer ON transactions (producer_id);

-- Offsets committed inside a transaction (TxnOffsetCommit): they move to
-- committed_offsets when it commits and are dropped when it aborts.
CREATE TABLE txn_offsets (
  transactional_id text NOT NULL,
  group_id text NOT NULL,
  topic text NOT NULL,
  partition int NOT NULL,
  committed_offset bigint NOT NULL,
  leader_epoch int NOT NULL DEFAULT -1,
  metadata text,
  PRIMARY KEY (transactional_id, group_id, topic, partition)
);
CREATE INDEX txn_offsets_group ON txn_offsets (group_id);

-- Open transactions per partition: the first offset of each producer's
-- ongoing transaction there. The earliest is the partition's last stable
-- offset. Written in the statement that appends the batch, removed in the
-- statement that appends its COMMIT/ABORT marker.
CREATE TABLE open_txns (
  topic_id uuid NOT NULL,
  partition int NOT NULL,
  producer_id bigint NOT NULL,
  first_offset bigint NOT NULL,
  PRIMARY KEY (topic_id, partition, producer_id)
);

-- Aborted transactions per partition, for Fetch's aborted-transactions list
-- (read_committed consumers drop their records): first offset of the
-- transaction and offset of its ABORT marker.
CREATE TABLE aborted_txns (
  topic_id uuid NOT NULL,
  partition int NOT NULL,
  producer_id bigint NOT NULL,
  first_offset bigint NOT NULL,
  last_offset bigint NOT NULL,
  PRIMARY KEY (topic_id, partition, last_offset)
);

-- Down Migration
DROP TABLE aborted_txns;
DROP TABLE open_txns;
DROP TABLE txn_offsets;
DROP TABLE transactions;
