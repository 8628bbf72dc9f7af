-- Up Migration

-- Producing from SQL (docs/sql.md): send() writes a record into the outbox
-- inside the application's own transaction; the broker's outbox relay appends
-- it to the log after that transaction commits and deletes it in the
-- transaction of the append, so each record reaches the log exactly once.

-- One row per record sent. id is the call order (within one transaction the
-- records of a partition keep it); xact is the sending transaction.
CREATE TABLE outbox (
  xact bigint NOT NULL DEFAULT txid_current(),
  topic_id uuid NOT NULL REFERENCES topics ON DELETE CASCADE,
  partition int NOT NULL CHECK (partition >= 0),
  id bigint GENERATED ALWAYS AS IDENTITY,
  -- CreateTime: the send call's clock, in ms, as a producer stamps its records.
  timestamp_ms bigint NOT NULL,
  key bytea,
  value bytea,
  header_keys text[] NOT NULL DEFAULT '{}',
  header_values bytea[] NOT NULL DEFAULT '{}',
  CHECK (cardinality(header_keys) = cardinality(header_values)),
  PRIMARY KEY (xact, topic_id, partition, id)
);

-- The commit order of the partition's sending transactions. A row is written
-- just before its transaction commits, by the deferred trigger below, under
-- the partition's outbox_sequences row lock, which is held from there until
-- the commit: so commit_seq order is commit order, and the committed rows of a
-- partition are always a prefix of it (a later number waits for the earlier
-- commit). The lock is held only while the transaction commits, never for its
-- length.
CREATE TABLE outbox_sequences (
  topic_id uuid NOT NULL REFERENCES topics ON DELETE CASCADE,
  partition int NOT NULL,
  next_seq bigint NOT NULL,
  PRIMARY KEY (topic_id, partition)
);
CREATE TABLE outbox_commits (
  topic_id uuid NOT NULL REFERENCES topics ON DELETE CASCADE,
  partition int NOT NULL,
  commit_seq bigint NOT NULL,
  xact bigint NOT NULL,
  PRIMARY KEY (topic_id, partition, commit_seq),
  UNIQUE (xact, topic_id, partition)
);

-- Fires at commit for each row sent; the first one of a transaction numbers
-- every partition the transaction sent to, in one order, so two transactions
-- sending to the same partitions cannot deadlock.
CREATE FUNCTION outbox_sequence() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
  t uuid;
  p int;
  seq bigint;
BEGIN
  IF EXISTS (SELECT 1 FROM outbox_commits c WHERE c.xact = NEW.xact AND c.topic_id = NEW.topic_id AND c.partition = NEW.partition) THEN
    RETURN NULL;
  END IF;
  FOR t, p IN SELECT DISTINCT o.topic_id, o.partition FROM outbox o WHERE o.xact = NEW.xact ORDER BY 1, 2 LOOP
    CONTINUE WHEN EXISTS (SELECT 1 FROM outbox_commits c WHERE c.xact = NEW.xact AND c.topic_id = t AND c.partition = p);
    INSERT INTO outbox_sequences AS s (topic_id, partition, next_seq) VALUES (t, p, 1)
      ON CONFLICT (topic_id, partition) DO UPDATE SET next_seq = s.next_seq + 1
      RETURNING s.next_seq - 1 INTO seq;
    INSERT INTO outbox_commits (topic_id, partition, commit_seq, xact) VALUES (t, p, seq, NEW.xact);
  END LOOP;
  RETURN NULL;
END
$$;
CREATE CONSTRAINT TRIGGER outbox_sequence AFTER INSERT ON outbox DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION outbox_sequence();

-- Java's murmur2 (Utils.murmur2) on unsigned 32-bit values held in bigint; the
-- product of two of them stays below 2^63.
CREATE FUNCTION murmur2(data bytea) RETURNS int LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
  m constant bigint := 1540483477; -- 0x5bd1e995
  mask constant bigint := 4294967295;
  len int := length(data);
  h bigint := (2538058380 # len) & mask; -- seed 0x9747b28c
  k bigint;
  i int := 0;
  tail int := len & ~3;
BEGIN
  WHILE i < tail LOOP
    k := get_byte(data, i)::bigint | (get_byte(data, i + 1)::bigint << 8) | (get_byte(data, i + 2)::bigint << 16) | (get_byte(data, i + 3)::bigint << 24);
    k := (k * m) & mask;
    k := k # (k >> 24);
    k := (k * m) & mask;
    h := ((h * m) & mask) # k;
    i := i + 4;
  END LOOP;
  IF len - tail = 3 THEN h := h # (get_byte(data, tail + 2)::bigint << 16); END IF;
  IF len - tail >= 2 THEN h := h # (get_byte(data, tail + 1)::bigint << 8); END IF;
  IF len - tail >= 1 THEN
    h := h # get_byte(data, tail)::bigint;
    h := (h * m) & mask;
  END IF;
  h := h # (h >> 13);
  h := (h * m) & mask;
  h := h # (h >> 15);
  RETURN (h - ((h & 2147483648) << 1))::int; -- as Java's signed int
END
$$;

-- Whether a PostgreSQL role may send to a topic, by the broker's Kafka ACLs
-- (CreateAcls, kafka-acls.sh): the role is the principal User:<role>. As
-- Kafka's authorizer: a matching DENY of WRITE or ALL wins, else a matching
-- ALLOW of WRITE or ALL allows; no match denies. Literal '*' matches every
-- topic, User:* every role, and only host '*' matches (SQL has no client host
-- the broker would know).
CREATE FUNCTION send_allowed(topic_id uuid, role name) RETURNS boolean LANGUAGE sql STABLE SECURITY DEFINER AS $$
  WITH topic AS (SELECT t.name FROM topics t WHERE t.topic_id = send_allowed.topic_id),
  matching AS (
    SELECT a.permission_type FROM acls a, topic
    WHERE a.resource_type = 2
      AND a.operation IN (2, 4)
      AND a.host = '*'
      AND a.principal IN ('User:' || role, 'User:*')
      AND ((a.pattern_type = 3 AND (a.resource_name = topic.name OR a.resource_name = '*'))
        OR (a.pattern_type = 4 AND starts_with(topic.name, a.resource_name)))
  )
  SELECT NOT EXISTS (SELECT 1 FROM matching WHERE permission_type = 2) AND EXISTS (SELECT 1 FROM matching WHERE permission_type = 3)
$$;

-- Roles other than the outbox's owner may insert only records of the topics
-- their ACLs allow (the owner, the broker's role, is not subject to it).
ALTER TABLE outbox ENABLE ROW LEVEL SECURITY;
CREATE POLICY outbox_send ON outbox FOR INSERT WITH CHECK (send_allowed(topic_id, current_user));

-- The topic's id and the record's partition: the one given, else murmur2 of
-- the key as the Java client and kafkajs pick, else one partition per sending
-- transaction (consecutive transactions round-robin). An unknown topic or a
-- partition it does not have raises UNKNOWN_TOPIC_OR_PARTITION (SQLSTATE
-- 42704); a record without key for a topic set to cleanup.policy=compact,
-- INVALID_RECORD (22004), as Kafka refuses it.
CREATE FUNCTION send_route(topic text, key bytea, partition int, OUT topic_id uuid, OUT partition_index int) LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
  n int;
  compacted boolean;
BEGIN
  SELECT t.topic_id, t.partition_count, coalesce(t.configs ->> 'cleanup.policy', '') LIKE '%compact%' INTO topic_id, n, compacted FROM topics t WHERE t.name = topic;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'UNKNOWN_TOPIC_OR_PARTITION: topic "%" does not exist', topic USING ERRCODE = '42704';
  END IF;
  IF compacted AND key IS NULL THEN
    RAISE EXCEPTION 'INVALID_RECORD: compacted topic "%" cannot accept a record without key', topic USING ERRCODE = '22004';
  END IF;
  IF partition IS NOT NULL THEN
    IF partition < 0 OR partition >= n THEN
      RAISE EXCEPTION 'UNKNOWN_TOPIC_OR_PARTITION: topic "%" has no partition %', topic, partition USING ERRCODE = '42704';
    END IF;
    partition_index := partition;
  ELSIF key IS NOT NULL THEN
    partition_index := (murmur2(key) & 2147483647) % n;
  ELSE
    partition_index := txid_current() % n;
  END IF;
END
$$;

-- Header keys and values from JSON: an object {"name": "value", ...} or, to
-- keep order and repeated names, an array of [name, value] pairs. A string
-- value is its UTF-8 bytes, null a null value, anything else its JSON text.
-- (Every function here is PL/pgSQL, whose plans are cached across calls; a
-- SQL function that cannot be inlined is planned again at every call.)
CREATE FUNCTION send_headers(headers jsonb, OUT header_keys text[], OUT header_values bytea[]) LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  e record;
BEGIN
  header_keys := '{}';
  header_values := '{}';
  IF jsonb_typeof(headers) = 'object' THEN
    FOR e IN SELECT * FROM jsonb_each(headers) LOOP
      header_keys := header_keys || e.key;
      header_values := header_values || CASE jsonb_typeof(e.value) WHEN 'null' THEN NULL WHEN 'string' THEN convert_to(e.value #>> '{}', 'UTF8') ELSE convert_to(e.value::text, 'UTF8') END;
    END LOOP;
  ELSIF jsonb_typeof(headers) = 'array' THEN
    FOR e IN SELECT value FROM jsonb_array_elements(headers) LOOP
      IF jsonb_typeof(e.value) <> 'array' OR jsonb_typeof(e.value -> 0) <> 'string' THEN
        RAISE EXCEPTION 'a header must be a [name, value] pair with a string name: %', e.value USING ERRCODE = '22023';
      END IF;
      header_keys := header_keys || (e.value ->> 0);
      header_values := header_values || CASE jsonb_typeof(e.value -> 1) WHEN 'null' THEN NULL WHEN 'string' THEN convert_to(e.value ->> 1, 'UTF8') ELSE convert_to((e.value -> 1)::text, 'UTF8') END;
    END LOOP;
  ELSIF headers IS NOT NULL AND jsonb_typeof(headers) <> 'null' THEN
    RAISE EXCEPTION 'headers must be a JSON object or an array of [name, value] pairs' USING ERRCODE = '22023';
  END IF;
END
$$;

-- send(): one record, sent if and when the calling transaction commits.
-- Returns the partition. The binary form: header values as bytea. It runs as
-- the caller (so the outbox's row-level security sees the caller's role);
-- send_route, as the broker's role, reads the topic.
CREATE FUNCTION send(topic text, key bytea, value bytea, header_keys text[], header_values bytea[], partition int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  r record;
BEGIN
  IF cardinality(coalesce(header_keys, '{}')) <> cardinality(coalesce(header_values, '{}')) THEN
    RAISE EXCEPTION 'header_keys and header_values differ in length' USING ERRCODE = '22023';
  END IF;
  IF array_position(header_keys, NULL) IS NOT NULL THEN
    RAISE EXCEPTION 'a header key is null' USING ERRCODE = '22004';
  END IF;
  r := send_route(topic, key, partition);
  INSERT INTO outbox (topic_id, partition, timestamp_ms, key, value, header_keys, header_values)
  VALUES (r.topic_id, r.partition_index, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint, key, value, coalesce(header_keys, '{}'), coalesce(header_values, '{}'));
  -- Delivered at commit only; repeated payloads in one transaction collapse into one.
  PERFORM pg_notify(current_schema() || '_outbox', r.topic_id::text || ':' || r.partition_index);
  RETURN r.partition_index;
END
$$;

CREATE FUNCTION send(topic text, key bytea, value bytea, headers jsonb DEFAULT NULL, partition int DEFAULT NULL) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  h record;
BEGIN
  IF headers IS NULL THEN
    RETURN send(topic, key, value, '{}'::text[], '{}'::bytea[], partition);
  END IF;
  h := send_headers(headers);
  RETURN send(topic, key, value, h.header_keys, h.header_values, partition);
END
$$;

-- Text key and value: their UTF-8 bytes.
CREATE FUNCTION send(topic text, key text, value text, headers jsonb DEFAULT NULL, partition int DEFAULT NULL) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  RETURN send(topic, convert_to(key, 'UTF8'), convert_to(value, 'UTF8'), headers, partition);
END
$$;

-- A jsonb value: its JSON text in UTF-8.
CREATE FUNCTION send(topic text, key text, value jsonb, headers jsonb DEFAULT NULL, partition int DEFAULT NULL) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  RETURN send(topic, convert_to(key, 'UTF8'), convert_to(value::text, 'UTF8'), headers, partition);
END
$$;

-- Pin every function to this schema (the migration runs with it as the
-- search path); pg_temp last, so no temporary table can stand in for one of
-- the broker's in the SECURITY DEFINER functions.
DO $$
DECLARE
  f regprocedure;
BEGIN
  FOR f IN
    SELECT p.oid::regprocedure FROM pg_proc p
    WHERE p.pronamespace = current_schema()::regnamespace AND p.proname IN ('outbox_sequence', 'murmur2', 'send_allowed', 'send_route', 'send_headers', 'send')
  LOOP
    EXECUTE format('ALTER FUNCTION %s SET search_path = %I, pg_temp', f, current_schema());
  END LOOP;
END
$$;
REVOKE ALL ON FUNCTION outbox_sequence() FROM PUBLIC;

-- Down Migration
DROP FUNCTION send(text, text, jsonb, jsonb, int);
DROP FUNCTION send(text, text, text, jsonb, int);
DROP FUNCTION send(text, bytea, bytea, jsonb, int);
DROP FUNCTION send(text, bytea, bytea, text[], bytea[], int);
DROP FUNCTION send_headers(jsonb);
DROP FUNCTION send_route(text, bytea, int);
DROP POLICY outbox_send ON outbox;
DROP FUNCTION send_allowed(uuid, name);
DROP FUNCTION murmur2(bytea);
DROP TRIGGER outbox_sequence ON outbox;
DROP FUNCTION outbox_sequence();
DROP TABLE outbox_commits;
DROP TABLE outbox_sequences;
DROP TABLE outbox;
