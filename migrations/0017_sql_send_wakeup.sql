-- Up Migration

-- Producing from SQL without a NOTIFY per transaction (docs/sql.md, "how it
-- works"). PostgreSQL holds one lock on the notification queue from a
-- notifying transaction's commit until its commit record is flushed, so
-- every transaction that NOTIFYs commits alone: one record per transaction
-- from several connections lost group commit (0.14 times the rate of a plain
-- INSERT). Now a sending transaction notifies only while no relay is polling
-- the outbox. A relay polling holds the session advisory lock (schema, 1);
-- a sending transaction, at commit, probes it (taking and at once releasing
-- it shared) and notifies only if it was free. So that no commit falls
-- between a relay's last poll and the point it stops polling, each sending
-- transaction holds (schema, 2) shared until its commit is done, and a relay
-- that stops polling first releases (schema, 1), then waits for (schema, 2)
-- exclusively (every transaction that saw it polling has committed), then
-- looks once more. Advisory locks, unlike a row, do not depend on the
-- sending transaction's snapshot (REPEATABLE READ would see an old row).

CREATE OR REPLACE FUNCTION outbox_sequence() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
  t uuid;
  p int;
  seq bigint;
  numbered text[] := '{}';
  payload text;
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
    numbered := numbered || (t::text || ':' || p);
  END LOOP;
  IF cardinality(numbered) > 0 THEN
    PERFORM pg_advisory_xact_lock_shared(hashtext(current_schema()), 2);
    IF pg_try_advisory_lock_shared(hashtext(current_schema()), 1) THEN
      PERFORM pg_advisory_unlock_shared(hashtext(current_schema()), 1);
      -- No relay is polling: wake them (delivered at commit only).
      FOREACH payload IN ARRAY numbered LOOP
        PERFORM pg_notify(current_schema() || '_outbox', payload);
      END LOOP;
    END IF;
  END IF;
  RETURN NULL;
END
$$;

-- send() as in 0013, without its NOTIFY (the trigger above decides).
CREATE OR REPLACE FUNCTION send(topic text, key bytea, value bytea, header_keys text[], header_values bytea[], partition int) RETURNS int LANGUAGE plpgsql AS $$
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
  RETURN r.partition_index;
END
$$;

-- CREATE OR REPLACE drops the pinned search path: pin it again, as 0013 did.
DO $$
BEGIN
  EXECUTE format('ALTER FUNCTION outbox_sequence() SET search_path = %I, pg_temp', current_schema());
  EXECUTE format('ALTER FUNCTION send(text, bytea, bytea, text[], bytea[], int) SET search_path = %I, pg_temp', current_schema());
END
$$;

-- Down Migration
CREATE OR REPLACE FUNCTION outbox_sequence() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $$
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
CREATE OR REPLACE FUNCTION send(topic text, key bytea, value bytea, header_keys text[], header_values bytea[], partition int) RETURNS int LANGUAGE plpgsql AS $$
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
  PERFORM pg_notify(current_schema() || '_outbox', r.topic_id::text || ':' || r.partition_index);
  RETURN r.partition_index;
END
$$;
DO $$
BEGIN
  EXECUTE format('ALTER FUNCTION outbox_sequence() SET search_path = %I, pg_temp', current_schema());
  EXECUTE format('ALTER FUNCTION send(text, bytea, bytea, text[], bytea[], int) SET search_path = %I, pg_temp', current_schema());
END
$$;
