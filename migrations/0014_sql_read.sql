-- Up Migration

-- Reading the log with SQL. The functions run with this schema as their
-- search path (SET search_path FROM CURRENT), so they find the broker's
-- tables whatever the caller's search path is.

-- A record header as Kafka's Header: a UTF-8 key and bytes (NULL for a null value).
CREATE TYPE record_header AS (key text, value bytea);

-- The value of the last header with that key (Kafka's Headers.lastHeader), NULL if none.
CREATE FUNCTION header_value(headers record_header[], header_key text) RETURNS bytea
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT h.value FROM unnest(headers) WITH ORDINALITY AS h(key, value, n) WHERE h.key = header_key ORDER BY h.n DESC LIMIT 1
$$;

-- Per partition: the log start offset, the last stable offset (the first
-- offset of the earliest open transaction, else the high watermark) and the
-- high watermark, as ListOffsets reports them.
CREATE VIEW partition_offsets AS
SELECT t.name AS topic, p.partition, p.log_start_offset,
       coalesce((SELECT min(o.first_offset) FROM open_txns o WHERE o.topic_id = p.topic_id AND o.partition = p.partition), p.next_offset) AS last_stable_offset,
       p.next_offset AS high_watermark
FROM topics t JOIN partitions p ON p.topic_id = t.topic_id;

-- The records of one partition, in offset order, as a consumer sees them:
--   from_offset     first offset to read (default and floor: the log start offset);
--   from_timestamp  instead or as well: start at the first record whose timestamp is at
--                   or after it (ListOffsets' rule), then return every record after it;
--   max_records     stop after this many rows (bounds the work: LIMIT alone does not,
--                   a PL/pgSQL function decodes its whole range before returning);
--   isolation_level 'read_committed' (default: stop at the last stable offset, skip
--                   aborted transactions) or 'read_uncommitted' (up to the high watermark).
-- Control batches (transaction markers) are never returned. Records are decoded
-- from the stored magic-v2 batches. PostgreSQL has no gzip, snappy, lz4 or zstd:
-- a compressed batch comes back as one row with its codec in `compression`, its
-- first offset at or after from_offset in "offset", and NULL timestamp, key,
-- value and headers. A topic with compression.type=uncompressed has the broker
-- store every batch uncompressed.
CREATE FUNCTION records(
  topic text,
  "partition" int,
  from_offset bigint DEFAULT NULL,
  from_timestamp timestamptz DEFAULT NULL,
  max_records bigint DEFAULT NULL,
  isolation_level text DEFAULT 'read_committed'
) RETURNS TABLE ("offset" bigint, "timestamp" timestamptz, timestamp_type text, key bytea, value bytea, headers record_header[], compression text)
LANGUAGE plpgsql STABLE
SET search_path FROM CURRENT
AS $fn$
DECLARE
  v_topic_id uuid;
  v_log_start bigint;
  v_end bigint;
  v_start bigint;
  v_first_base bigint;
  v_seek_ms bigint;
  v_left bigint := coalesce(max_records, 9223372036854775807);
  b record;
  d bytea;
  attrs int;
  codec int;
  log_append boolean;
  base_ts bigint;
  max_ts bigint;
  n int;
  i int;
  pos int;
  rec_end int;
  ts bigint;
  off bigint;
  len int;
  hcount int;
  hkey text;
  hval bytea;
  hs record_header[];
  x bigint;
  byte int;
  shift int;
BEGIN
  IF isolation_level NOT IN ('read_committed', 'read_uncommitted') THEN
    RAISE EXCEPTION 'isolation_level must be read_committed or read_uncommitted, not %', isolation_level USING ERRCODE = 'invalid_parameter_value';
  END IF;
  IF v_left <= 0 THEN RETURN; END IF;

  SELECT p.topic_id, p.log_start_offset, p.next_offset INTO v_topic_id, v_log_start, v_end
  FROM topics t JOIN partitions p ON p.topic_id = t.topic_id
  WHERE t.name = records.topic AND p.partition = records."partition";
  IF NOT FOUND THEN
    RAISE EXCEPTION 'unknown topic or partition %-%', records.topic, records."partition" USING ERRCODE = 'undefined_object';
  END IF;
  IF isolation_level = 'read_committed' THEN
    SELECT coalesce(min(o.first_offset), v_end) INTO v_end FROM open_txns o WHERE o.topic_id = v_topic_id AND o.partition = records."partition";
  END IF;
  v_start := greatest(coalesce(from_offset, v_log_start), v_log_start);
  IF v_start >= v_end THEN RETURN; END IF;
  v_seek_ms := (extract(epoch FROM from_timestamp) * 1000)::bigint;

  -- The batch holding v_start (offsets may have gaps: compaction keeps offsets).
  SELECT coalesce(max(x.base_offset), v_start) INTO v_first_base FROM batches x
  WHERE x.topic_id = v_topic_id AND x.partition = records."partition" AND x.base_offset <= v_start;
  IF v_seek_ms IS NOT NULL THEN
    -- The first batch whose max timestamp reaches from_timestamp, as ListOffsets finds it; the
    -- records before the first one at or after it are then skipped, and every one after it returned.
    SELECT x.base_offset INTO v_first_base FROM batches x
    WHERE x.topic_id = v_topic_id AND x.partition = records."partition" AND x.base_offset >= v_first_base AND x.base_offset < v_end
      AND x.last_offset >= v_start AND x.max_timestamp >= v_seek_ms AND NOT x.is_control
    ORDER BY x.base_offset LIMIT 1;
    IF NOT FOUND THEN RETURN; END IF;
  END IF;

  FOR b IN
    -- A detoasted copy (|| ''), read once: a TOAST pointer in a variable would be fetched again by every get_byte.
    SELECT x.base_offset, x.max_timestamp, x.data || '\x'::bytea AS data FROM batches x
    WHERE x.topic_id = v_topic_id AND x.partition = records."partition"
      AND x.base_offset >= v_first_base AND x.base_offset < v_end AND x.last_offset >= v_start
      AND NOT x.is_control
      AND (isolation_level = 'read_uncommitted' OR NOT x.is_transactional OR NOT EXISTS (
        SELECT 1 FROM aborted_txns a
        WHERE a.topic_id = x.topic_id AND a.partition = x.partition AND a.producer_id = x.producer_id
          AND x.base_offset BETWEEN a.first_offset AND a.last_offset))
    ORDER BY x.base_offset
  LOOP
    d := b.data;
    attrs := get_byte(d, 22) | (get_byte(d, 21) << 8);
    codec := attrs & 7;
    IF codec <> 0 THEN
      -- A batch PostgreSQL cannot decompress: one marker row (while seeking a timestamp, only if the batch reaches it).
      IF v_seek_ms IS NOT NULL THEN
        IF b.max_timestamp < v_seek_ms THEN CONTINUE; END IF;
        v_seek_ms := NULL;
      END IF;
      "offset" := greatest(b.base_offset, v_start);
      "timestamp" := NULL; timestamp_type := NULL; key := NULL; value := NULL; headers := NULL;
      compression := CASE codec WHEN 1 THEN 'gzip' WHEN 2 THEN 'snappy' WHEN 3 THEN 'lz4' WHEN 4 THEN 'zstd' ELSE 'unknown' END;
      RETURN NEXT;
      v_left := v_left - 1;
      IF v_left <= 0 THEN RETURN; END IF;
      CONTINUE;
    END IF;
    log_append := (attrs & 8) <> 0;
    timestamp_type := CASE WHEN log_append THEN 'LogAppendTime' ELSE 'CreateTime' END;
    compression := 'none';
    base_ts := ('x' || encode(substring(d FROM 28 FOR 8), 'hex'))::bit(64)::bigint;
    max_ts := ('x' || encode(substring(d FROM 36 FOR 8), 'hex'))::bit(64)::bigint;
    n := (get_byte(d, 57) << 24) | (get_byte(d, 58) << 16) | (get_byte(d, 59) << 8) | get_byte(d, 60);
    pos := 61;
    FOR i IN 1..n LOOP
      -- Varints are zigzag-encoded; most fit one byte, hence the fast path before each loop.
      -- length
      byte := get_byte(d, pos); pos := pos + 1;
      IF byte < 128 THEN x := byte; ELSE
        x := byte & 127; shift := 7;
        LOOP byte := get_byte(d, pos); pos := pos + 1; x := x | ((byte & 127)::bigint << shift); EXIT WHEN byte < 128; shift := shift + 7; END LOOP;
      END IF;
      rec_end := pos + ((x >> 1) # -(x & 1))::int;
      pos := pos + 1; -- record attributes (unused)
      -- timestamp delta (varlong)
      byte := get_byte(d, pos); pos := pos + 1;
      IF byte < 128 THEN x := byte; ELSE
        x := byte & 127; shift := 7;
        LOOP byte := get_byte(d, pos); pos := pos + 1; x := x | ((byte & 127)::bigint << shift); EXIT WHEN byte < 128; shift := shift + 7; END LOOP;
      END IF;
      ts := CASE WHEN log_append THEN max_ts ELSE base_ts + (((x >> 1) & 9223372036854775807) # -(x & 1)) END;
      -- offset delta
      byte := get_byte(d, pos); pos := pos + 1;
      IF byte < 128 THEN x := byte; ELSE
        x := byte & 127; shift := 7;
        LOOP byte := get_byte(d, pos); pos := pos + 1; x := x | ((byte & 127)::bigint << shift); EXIT WHEN byte < 128; shift := shift + 7; END LOOP;
      END IF;
      off := b.base_offset + ((x >> 1) # -(x & 1));
      IF off < v_start OR off >= v_end OR (v_seek_ms IS NOT NULL AND ts < v_seek_ms) THEN
        pos := rec_end;
        CONTINUE;
      END IF;
      v_seek_ms := NULL;
      -- key
      byte := get_byte(d, pos); pos := pos + 1;
      IF byte < 128 THEN x := byte; ELSE
        x := byte & 127; shift := 7;
        LOOP byte := get_byte(d, pos); pos := pos + 1; x := x | ((byte & 127)::bigint << shift); EXIT WHEN byte < 128; shift := shift + 7; END LOOP;
      END IF;
      len := ((x >> 1) # -(x & 1))::int;
      IF len < 0 THEN key := NULL; ELSE key := substring(d FROM pos + 1 FOR len); pos := pos + len; END IF;
      -- value
      byte := get_byte(d, pos); pos := pos + 1;
      IF byte < 128 THEN x := byte; ELSE
        x := byte & 127; shift := 7;
        LOOP byte := get_byte(d, pos); pos := pos + 1; x := x | ((byte & 127)::bigint << shift); EXIT WHEN byte < 128; shift := shift + 7; END LOOP;
      END IF;
      len := ((x >> 1) # -(x & 1))::int;
      IF len < 0 THEN value := NULL; ELSE value := substring(d FROM pos + 1 FOR len); pos := pos + len; END IF;
      -- headers
      byte := get_byte(d, pos); pos := pos + 1;
      IF byte < 128 THEN x := byte; ELSE
        x := byte & 127; shift := 7;
        LOOP byte := get_byte(d, pos); pos := pos + 1; x := x | ((byte & 127)::bigint << shift); EXIT WHEN byte < 128; shift := shift + 7; END LOOP;
      END IF;
      hcount := ((x >> 1) # -(x & 1))::int;
      hs := '{}';
      FOR j IN 1..hcount LOOP
        byte := get_byte(d, pos); pos := pos + 1;
        IF byte < 128 THEN x := byte; ELSE
          x := byte & 127; shift := 7;
          LOOP byte := get_byte(d, pos); pos := pos + 1; x := x | ((byte & 127)::bigint << shift); EXIT WHEN byte < 128; shift := shift + 7; END LOOP;
        END IF;
        len := ((x >> 1) # -(x & 1))::int;
        hkey := convert_from(substring(d FROM pos + 1 FOR len), 'UTF8'); pos := pos + len;
        byte := get_byte(d, pos); pos := pos + 1;
        IF byte < 128 THEN x := byte; ELSE
          x := byte & 127; shift := 7;
          LOOP byte := get_byte(d, pos); pos := pos + 1; x := x | ((byte & 127)::bigint << shift); EXIT WHEN byte < 128; shift := shift + 7; END LOOP;
        END IF;
        len := ((x >> 1) # -(x & 1))::int;
        IF len < 0 THEN hval := NULL; ELSE hval := substring(d FROM pos + 1 FOR len); pos := pos + len; END IF;
        hs := hs || ROW(hkey, hval)::record_header;
      END LOOP;
      headers := hs;
      "offset" := off;
      "timestamp" := CASE WHEN ts = -1 THEN NULL ELSE timestamptz 'epoch' + ts * interval '1 millisecond' END;
      RETURN NEXT;
      v_left := v_left - 1;
      IF v_left <= 0 THEN RETURN; END IF;
      pos := rec_end;
    END LOOP;
  END LOOP;
END
$fn$;

-- Every partition of every topic, read_committed, from the log start. Filter on
-- topic and partition (the filter reaches the function's arguments); for an
-- offset or time range call records() directly, which decodes only that range.
CREATE VIEW topic_records AS
SELECT t.name AS topic, p.partition, r."offset", r."timestamp", r.timestamp_type, r.key, r.value, r.headers, r.compression
FROM topics t JOIN partitions p ON p.topic_id = t.topic_id
CROSS JOIN LATERAL records(t.name, p.partition) r;

-- Down Migration
DROP VIEW topic_records;
DROP FUNCTION records(text, int, bigint, timestamptz, bigint, text);
DROP VIEW partition_offsets;
DROP FUNCTION header_value(record_header[], text);
DROP TYPE record_header;
