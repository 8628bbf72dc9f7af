-- Up Migration

-- __consumer_offsets as Kafka presents it to consumers (Burrow and other lag
-- tools read it), served from committed_offsets: every commit takes the next
-- position of its group's partition of the topic (Kafka's partitionFor,
-- abs(String.hashCode) % 50), under that partition's row lock, so positions
-- become visible in position order as offsets do in a partition. The topic
-- reads as Kafka's compacted log: the newest commit of each key, older
-- positions are gaps; a deleted offset leaves a tombstone with its own position.

-- Java's String.hashCode over UTF-16 code units, abs (MIN_VALUE -> 0), mod 50.
CREATE FUNCTION consumer_offsets_partition(group_id text) RETURNS int LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
  h bigint := 0;
  cp int;
BEGIN
  FOREACH cp IN ARRAY (SELECT coalesce(array_agg(ascii(c)), '{}') FROM regexp_split_to_table(group_id, '') AS c) LOOP
    IF cp >= 65536 THEN
      h := (h * 31 + 55296 + ((cp - 65536) >> 10)) & 4294967295;
      h := (h * 31 + 56320 + ((cp - 65536) & 1023)) & 4294967295;
    ELSE
      h := (h * 31 + cp) & 4294967295;
    END IF;
  END LOOP;
  IF h >= 2147483648 THEN h := h - 4294967296; END IF;
  RETURN CASE WHEN h = -2147483648 THEN 0 ELSE abs(h) END % 50;
END $$;

-- The next position of each partition of __consumer_offsets (its high watermark).
CREATE TABLE consumer_offsets_partitions (
  partition int PRIMARY KEY,
  next_position bigint NOT NULL DEFAULT 0
);
INSERT INTO consumer_offsets_partitions (partition) SELECT generate_series(0, 49);

ALTER TABLE committed_offsets ADD COLUMN log_partition int, ADD COLUMN log_position bigint;
UPDATE committed_offsets c SET log_partition = n.log_partition, log_position = n.log_position
FROM (SELECT group_id, topic, partition, consumer_offsets_partition(group_id) AS log_partition,
             row_number() OVER (PARTITION BY consumer_offsets_partition(group_id) ORDER BY commit_timestamp, group_id, topic, partition) - 1 AS log_position
      FROM committed_offsets) n
WHERE c.group_id = n.group_id AND c.topic = n.topic AND c.partition = n.partition;
UPDATE consumer_offsets_partitions p SET next_position = n.next_position
FROM (SELECT log_partition, max(log_position) + 1 AS next_position FROM committed_offsets GROUP BY log_partition) n
WHERE p.partition = n.log_partition;
CREATE INDEX committed_offsets_log_position ON committed_offsets (log_partition, log_position);

-- Deleted offsets (OffsetDelete, DeleteGroups, expiry, a deleted topic), as
-- Kafka's tombstones; a new commit of the key replaces its tombstone.
CREATE TABLE consumer_offsets_tombstones (
  group_id text NOT NULL,
  topic text NOT NULL,
  partition int NOT NULL,
  log_partition int NOT NULL,
  log_position bigint NOT NULL,
  deleted_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (group_id, topic, partition)
);
CREATE INDEX consumer_offsets_tombstones_log_position ON consumer_offsets_tombstones (log_partition, log_position);

-- An upsert, so a partition's row is there even if the table was emptied (a test harness truncates every table).
CREATE FUNCTION consumer_offsets_next_position(log_partition int) RETURNS bigint LANGUAGE sql AS $$
  INSERT INTO consumer_offsets_partitions AS p (partition, next_position) VALUES (log_partition, 1)
  ON CONFLICT (partition) DO UPDATE SET next_position = p.next_position + 1
  RETURNING next_position - 1
$$;

CREATE FUNCTION committed_offsets_position() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- The broker passes the partition it computed (the same hash); a re-commit keeps its row's.
  IF NEW.log_partition IS NULL OR (TG_OP = 'UPDATE' AND NEW.group_id <> OLD.group_id) THEN
    NEW.log_partition := consumer_offsets_partition(NEW.group_id);
  END IF;
  NEW.log_position := consumer_offsets_next_position(NEW.log_partition);
  IF TG_OP = 'INSERT' THEN
    DELETE FROM consumer_offsets_tombstones WHERE group_id = NEW.group_id AND topic = NEW.topic AND partition = NEW.partition;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER committed_offsets_position BEFORE INSERT OR UPDATE ON committed_offsets FOR EACH ROW EXECUTE FUNCTION committed_offsets_position();

CREATE FUNCTION committed_offsets_tombstone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO consumer_offsets_tombstones (group_id, topic, partition, log_partition, log_position)
  VALUES (OLD.group_id, OLD.topic, OLD.partition, OLD.log_partition, consumer_offsets_next_position(OLD.log_partition))
  ON CONFLICT (group_id, topic, partition) DO UPDATE SET log_position = excluded.log_position, deleted_at = now();
  RETURN OLD;
END $$;
CREATE TRIGGER committed_offsets_tombstone AFTER DELETE ON committed_offsets FOR EACH ROW EXECUTE FUNCTION committed_offsets_tombstone();

-- Down Migration
DROP TRIGGER committed_offsets_tombstone ON committed_offsets;
DROP TRIGGER committed_offsets_position ON committed_offsets;
DROP FUNCTION committed_offsets_tombstone();
DROP FUNCTION committed_offsets_position();
DROP FUNCTION consumer_offsets_next_position(int);
DROP TABLE consumer_offsets_tombstones;
DROP INDEX committed_offsets_log_position;
ALTER TABLE committed_offsets DROP COLUMN log_partition, DROP COLUMN log_position;
DROP TABLE consumer_offsets_partitions;
DROP FUNCTION consumer_offsets_partition(text);
