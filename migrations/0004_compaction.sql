-- Up Migration

-- The log cleaner's progress per compacted partition (Kafka's
-- cleaner-offset-checkpoint). Kept apart from `partitions` so the cleaner
-- never touches the row every append locks.
--   cleaned_offset: batches below it were compacted against every key up to
--     the high watermark of that pass; bytes at or above it count as dirty.
--   tombstones_due_at: earliest delete horizon (ms) of a tombstone kept by
--     the last pass; once passed, the partition is cleaned again whatever its
--     dirty ratio, so deletes do not wait for new writes.
CREATE TABLE cleaner_checkpoints (
  topic_id uuid NOT NULL,
  partition int NOT NULL,
  cleaned_offset bigint NOT NULL,
  tombstones_due_at bigint,
  cleaned_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (topic_id, partition),
  FOREIGN KEY (topic_id, partition) REFERENCES partitions ON DELETE CASCADE
);

-- Down Migration
DROP TABLE cleaner_checkpoints;
