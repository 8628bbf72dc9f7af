-- Up Migration

-- Records that retention or DeleteRecords removed before a group had
-- consumed them (the "silent skip" of Kafka's docs), per group and partition.
CREATE TABLE deleted_unread (
  group_id text NOT NULL,
  topic text NOT NULL,
  partition int NOT NULL,
  records bigint NOT NULL,
  last_deleted_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (group_id, topic, partition)
);

-- Down Migration
DROP TABLE deleted_unread;
