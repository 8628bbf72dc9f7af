-- Up Migration

-- One row: the cluster id every broker sharing this database reports.
CREATE TABLE cluster (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  cluster_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Broker processes sharing this database register here and refresh last_seen;
-- Metadata lists the live ones.
CREATE TABLE brokers (
  node_id int PRIMARY KEY,
  host text NOT NULL,
  port int NOT NULL,
  rack text,
  instance_id uuid NOT NULL,
  started_at timestamptz NOT NULL DEFAULT now(),
  last_seen timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE topics (
  topic_id uuid PRIMARY KEY,
  name text NOT NULL UNIQUE,
  partition_count int NOT NULL CHECK (partition_count > 0),
  configs jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now()
);

-- next_offset is the high watermark: it moves only inside the transaction that
-- inserts the batches it covers, under this row's lock, so commit order is
-- offset order.
CREATE TABLE partitions (
  topic_id uuid NOT NULL REFERENCES topics ON DELETE CASCADE,
  partition int NOT NULL,
  next_offset bigint NOT NULL DEFAULT 0,
  log_start_offset bigint NOT NULL DEFAULT 0,
  leader_epoch int NOT NULL DEFAULT 0,
  PRIMARY KEY (topic_id, partition)
);

-- One row per record batch, stored as the producer sent it (magic v2) with the
-- base offset rewritten; the other columns are what queries need.
CREATE TABLE batches (
  topic_id uuid NOT NULL,
  partition int NOT NULL,
  base_offset bigint NOT NULL,
  last_offset bigint NOT NULL,
  record_count int NOT NULL,
  first_timestamp bigint NOT NULL,
  max_timestamp bigint NOT NULL,
  producer_id bigint NOT NULL,
  producer_epoch smallint NOT NULL,
  base_sequence int NOT NULL,
  is_transactional boolean NOT NULL,
  is_control boolean NOT NULL,
  size int NOT NULL,
  data bytea NOT NULL,
  PRIMARY KEY (topic_id, partition, base_offset)
);
-- Batches are usually compressed by the producer already: skip pglz.
ALTER TABLE batches ALTER COLUMN data SET STORAGE EXTERNAL;

-- Down Migration
DROP TABLE batches;
DROP TABLE partitions;
DROP TABLE topics;
DROP TABLE brokers;
DROP TABLE cluster;
