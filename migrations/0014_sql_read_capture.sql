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


-- Capturing table changes (docs/sql.md): capture(table, topic) installs a
-- trigger that sends one record per inserted, updated or deleted row through
-- send() (migration 0013), in the transaction that changes the row, so the
-- record reaches the topic if and only if the change commits. Key and value
-- are what Debezium's PostgreSQL connector writes through Kafka Connect's
-- JsonConverter with schemas disabled, with the connector's defaults
-- (decimal.handling.mode=precise, time.precision.mode=adaptive,
-- binary.handling.mode=bytes, interval.handling.mode=numeric,
-- tombstones.on.delete=true), and before as with REPLICA IDENTITY FULL.

-- A double or float as Java's Double.toString/Float.toString writes it (Jackson
-- writes Connect's float64/float32 so): 1.0, 0.001, 1.0E7, 1.0E-4, NaN. `digits`
-- is PostgreSQL's shortest exact text of the value.
CREATE FUNCTION debezium_float(digits text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
  neg boolean := left(digits, 1) = '-';
  s text := ltrim(digits, '-');
  m text;
  e int := 0;
  point int;
  d text;
  dexp int;
  magnitude float8;
BEGIN
  IF s IN ('NaN', 'Infinity') THEN RETURN digits; END IF;
  magnitude := s::float8;
  IF magnitude = 0 THEN RETURN CASE WHEN neg THEN '-0.0' ELSE '0.0' END; END IF;
  IF position('e' IN s) > 0 THEN m := split_part(s, 'e', 1); e := split_part(s, 'e', 2)::int; ELSE m := s; END IF;
  point := position('.' IN m);
  IF point = 0 THEN d := m; dexp := length(m) + e; ELSE d := replace(m, '.', ''); dexp := point - 1 + e; END IF;
  -- value = 0.d × 10^dexp
  WHILE left(d, 1) = '0' LOOP d := substr(d, 2); dexp := dexp - 1; END LOOP;
  d := rtrim(d, '0');
  IF magnitude >= 1e-3 AND magnitude < 1e7 THEN
    IF dexp <= 0 THEN m := '0.' || repeat('0', -dexp) || d;
    ELSIF dexp >= length(d) THEN m := d || repeat('0', dexp - length(d)) || '.0';
    ELSE m := left(d, dexp) || '.' || substr(d, dexp + 1);
    END IF;
  ELSE
    m := left(d, 1) || '.' || coalesce(nullif(substr(d, 2), ''), '0') || 'E' || (dexp - 1);
  END IF;
  RETURN CASE WHEN neg THEN '-' ELSE '' END || m;
END
$$;

-- Java's BigInteger.toByteArray of an integral numeric: big-endian two's complement, shortest.
CREATE FUNCTION debezium_unscaled_bytes(u numeric) RETURNS bytea
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
  k int := 1;
  v numeric;
  out bytea := '\x';
BEGIN
  WHILE u >= 2::numeric ^ (8 * k - 1) OR u < -(2::numeric ^ (8 * k - 1)) LOOP k := k + 1; END LOOP;
  v := CASE WHEN u < 0 THEN u + 2::numeric ^ (8 * k) ELSE u END;
  FOR i IN 1..k LOOP
    out := set_byte('\x00'::bytea, 0, mod(v, 256)::int) || out;
    v := div(v, 256);
  END LOOP;
  RETURN out;
END
$$;

-- Connect's bytes in JSON: base64 without line breaks.
CREATE FUNCTION debezium_base64(b bytea) RETURNS text
LANGUAGE sql IMMUTABLE STRICT AS $$ SELECT to_json(translate(encode(b, 'base64'), E'\n', ''))::text $$;

-- One column's value as Debezium's JSON: `v` is the value as row_to_json
-- wrote it, `typ` the column's base type, `typmod` its modifier.
CREATE FUNCTION debezium_value(v json, typ oid, typmod int, decimal_mode text) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  s text;
  n numeric;
  sc int;
  t timestamptz;
  i interval;
BEGIN
  IF v IS NULL OR json_typeof(v) = 'null' THEN RETURN 'null'; END IF;
  s := v #>> '{}';
  CASE typ
    WHEN 'float4'::regtype, 'float8'::regtype THEN
      RETURN debezium_float(s);
    WHEN 'numeric'::regtype, 'money'::regtype THEN
      n := CASE WHEN typ = 'money'::regtype THEN s::money::numeric ELSE s::numeric END;
      IF decimal_mode = 'string' THEN RETURN to_json(n::text)::text; END IF;
      IF decimal_mode = 'double' THEN RETURN debezium_float(n::float8::text); END IF;
      IF typ = 'money'::regtype THEN sc := 2;
      ELSIF typmod >= 4 THEN sc := (typmod - 4) & 65535;
      ELSE
        -- numeric without a scale: io.debezium.data.VariableScaleDecimal.
        RETURN '{"scale":' || scale(n) || ',"value":' || debezium_base64(debezium_unscaled_bytes(n * 10::numeric ^ scale(n))) || '}';
      END IF;
      RETURN debezium_base64(debezium_unscaled_bytes(round(n, sc) * 10::numeric ^ sc));
    WHEN 'bytea'::regtype THEN
      RETURN debezium_base64(decode(substr(s, 3), 'hex'));
    WHEN 'date'::regtype THEN
      RETURN (s::date - date '1970-01-01')::text;
    WHEN 'time'::regtype THEN
      -- io.debezium.time.Time (ms) up to time(3), else MicroTime (µs).
      RETURN CASE WHEN typmod BETWEEN 0 AND 3 THEN (extract(epoch FROM s::time) * 1000)::bigint ELSE (extract(epoch FROM s::time) * 1000000)::bigint END::text;
    WHEN 'timestamp'::regtype THEN
      -- io.debezium.time.Timestamp (ms) up to timestamp(3), else MicroTimestamp (µs).
      RETURN CASE WHEN typmod BETWEEN 0 AND 3 THEN (extract(epoch FROM s::timestamp) * 1000)::bigint ELSE (extract(epoch FROM s::timestamp) * 1000000)::bigint END::text;
    WHEN 'timestamptz'::regtype THEN
      -- io.debezium.time.ZonedTimestamp: ISO-8601 in UTC, as many fraction digits as the column's precision (6 when unspecified).
      t := s::timestamptz;
      RETURN to_json(to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')
        || CASE WHEN typmod = 0 THEN '' ELSE '.' || left(to_char(t AT TIME ZONE 'UTC', 'US'), CASE WHEN typmod BETWEEN 1 AND 6 THEN typmod ELSE 6 END) END || 'Z')::text;
    WHEN 'interval'::regtype THEN
      -- io.debezium.time.MicroDuration: months count 30.4375 days (365.25 / 12).
      i := s::interval;
      RETURN trunc((extract(year FROM i) * 12 + extract(month FROM i)) * 30.4375 * 86400000000 + extract(day FROM i) * 86400000000
        + (extract(hour FROM i) * 3600 + extract(minute FROM i) * 60) * 1000000 + extract(microseconds FROM i))::bigint::text;
    WHEN 'json'::regtype, 'jsonb'::regtype THEN
      -- io.debezium.data.Json: the document as a string.
      RETURN to_json(v::text)::text;
    ELSE
      RETURN v::text;
  END CASE;
END
$$;

-- A row's columns (or its primary key's) as a compact JSON object in column
-- order; NULL for a key of a table without a primary key. Generated columns
-- are left out, as logical decoding leaves them out.
CREATE FUNCTION debezium_row(rel oid, r json, key_only boolean, decimal_mode text) RETURNS text
-- PL/pgSQL rather than SQL: a trigger calls it once per row, and PL/pgSQL keeps the plan of the catalog query for the session.
LANGUAGE plpgsql STABLE AS $$
BEGIN
  IF r IS NULL THEN RETURN NULL; END IF;
  RETURN (
    SELECT '{' || string_agg(to_json(a.attname::text)::text || ':' || debezium_value(r -> a.attname::text, coalesce(nullif(ty.typbasetype, 0), a.atttypid), CASE WHEN ty.typbasetype <> 0 THEN ty.typtypmod ELSE a.atttypmod END, decimal_mode), ',' ORDER BY a.attnum) || '}'
    FROM pg_attribute a JOIN pg_type ty ON ty.oid = a.atttypid
    WHERE a.attrelid = rel AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
      AND (NOT key_only OR a.attnum = ANY (SELECT unnest(i.indkey::int2[]) FROM pg_index i WHERE i.indrelid = rel AND i.indisprimary)));
END
$$;

-- Debezium's source block and envelope. `us`: when the row changed, in µs;
-- `lsn`: the WAL insert position then; `snapshot`: false, or Debezium's
-- snapshot marker (first, true, last).
CREATE FUNCTION debezium_envelope(before text, after text, op text, name text, schema_name text, table_name text, snapshot text, us bigint, lsn bigint) RETURNS text
LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN '{"before":' || coalesce(before, 'null') || ',"after":' || coalesce(after, 'null')
    || ',"source":{"version":"1.0","connector":"pgkafka","name":' || to_json(name)::text
    || ',"ts_ms":' || us / 1000 || ',"snapshot":' || to_json(snapshot)::text || ',"db":' || to_json(current_database()::text)::text
    || ',"sequence":' || to_json('[null,"' || lsn || '"]')::text
    || ',"ts_us":' || us || ',"ts_ns":' || us * 1000
    || ',"schema":' || to_json(schema_name)::text || ',"table":' || to_json(table_name)::text
    || ',"txId":' || txid_current() % 4294967296 || ',"lsn":' || lsn || ',"xmin":null,"origin":null,"origin_lsn":null}'
    || ',"op":"' || op || '","ts_ms":' || us / 1000 || ',"ts_us":' || us || ',"ts_ns":' || us * 1000 || ',"transaction":null}';
END
$$;

-- The trigger: TG_ARGV = topic, tombstones, server name, decimal handling mode.
CREATE FUNCTION capture_change() RETURNS trigger
LANGUAGE plpgsql
SET extra_float_digits = 1
AS $$
DECLARE
  topic text := TG_ARGV[0];
  tombstones boolean := TG_ARGV[1]::boolean;
  server text := TG_ARGV[2];
  decimal_mode text := TG_ARGV[3];
  us bigint := (extract(epoch FROM clock_timestamp()) * 1000000)::bigint;
  lsn bigint := pg_current_wal_insert_lsn() - '0/0';
  old_row json;
  new_row json;
  old_key text;
  new_key text;
BEGIN
  IF TG_OP <> 'INSERT' THEN
    old_row := row_to_json(OLD);
    old_key := debezium_row(TG_RELID, old_row, true, decimal_mode);
  END IF;
  IF TG_OP <> 'DELETE' THEN
    new_row := row_to_json(NEW);
    new_key := debezium_row(TG_RELID, new_row, true, decimal_mode);
  END IF;

  IF TG_OP = 'UPDATE' AND old_key IS DISTINCT FROM new_key THEN
    -- A changed primary key, as Debezium: a delete (and tombstone) of the old key, then a create of the new one.
    PERFORM send(topic, convert_to(old_key, 'UTF8'),
      convert_to(debezium_envelope(debezium_row(TG_RELID, old_row, false, decimal_mode), NULL, 'd', server, TG_TABLE_SCHEMA, TG_TABLE_NAME, 'false', us, lsn), 'UTF8'),
      ARRAY['__debezium.newkey'], ARRAY[convert_to(coalesce(new_key, 'null'), 'UTF8')], NULL);
    IF tombstones THEN PERFORM send(topic, convert_to(old_key, 'UTF8'), NULL::bytea, '{}'::text[], '{}'::bytea[], NULL); END IF;
    PERFORM send(topic, convert_to(new_key, 'UTF8'),
      convert_to(debezium_envelope(NULL, debezium_row(TG_RELID, new_row, false, decimal_mode), 'c', server, TG_TABLE_SCHEMA, TG_TABLE_NAME, 'false', us, lsn), 'UTF8'),
      ARRAY['__debezium.oldkey'], ARRAY[convert_to(coalesce(old_key, 'null'), 'UTF8')], NULL);
    RETURN NULL;
  END IF;

  PERFORM send(topic, convert_to(coalesce(new_key, old_key), 'UTF8'),
    convert_to(debezium_envelope(debezium_row(TG_RELID, old_row, false, decimal_mode), debezium_row(TG_RELID, new_row, false, decimal_mode),
      CASE TG_OP WHEN 'INSERT' THEN 'c' WHEN 'UPDATE' THEN 'u' ELSE 'd' END, server, TG_TABLE_SCHEMA, TG_TABLE_NAME, 'false', us, lsn), 'UTF8'),
    '{}'::text[], '{}'::bytea[], NULL);
  -- Debezium's tombstone after a delete (tombstones.on.delete), so compaction can drop the key; none without a key.
  IF TG_OP = 'DELETE' AND tombstones AND old_key IS NOT NULL THEN
    PERFORM send(topic, convert_to(old_key, 'UTF8'), NULL::bytea, '{}'::text[], '{}'::bytea[], NULL);
  END IF;
  RETURN NULL;
END
$$;

-- The trigger's name on a captured table: one per broker schema, so two
-- brokers' schemas can capture the same table.
CREATE FUNCTION capture_trigger_name() RETURNS name LANGUAGE sql STABLE AS $$ SELECT (current_schema() || '_capture')::name $$;

-- capture(table, topic): every later insert, update and delete of the table
-- sends a change event to the topic (which must exist). Capturing a table
-- again replaces its settings. `name` is Debezium's topic.prefix (source.name),
-- the database's name by default; decimal_handling_mode is precise, double or
-- string. snapshot => true also sends the rows the table holds now as
-- Debezium's snapshot (op "r") events, in primary key order, consistent with
-- the changes that follow: creating the trigger locks out writers until the
-- calling transaction ends.
CREATE FUNCTION capture(source regclass, topic text, tombstones boolean DEFAULT true, name text DEFAULT NULL, decimal_handling_mode text DEFAULT 'precise', snapshot boolean DEFAULT false) RETURNS bigint
LANGUAGE plpgsql
SET extra_float_digits = 1
AS $$
DECLARE
  server text := coalesce(name, current_database());
  rel_schema text;
  rel_name text;
  r record;
  key text;
  sent bigint := 0;
BEGIN
  IF decimal_handling_mode NOT IN ('precise', 'double', 'string') THEN
    RAISE EXCEPTION 'decimal_handling_mode must be precise, double or string, not %', decimal_handling_mode USING ERRCODE = 'invalid_parameter_value';
  END IF;
  IF NOT EXISTS (SELECT 1 FROM topics t WHERE t.name = capture.topic) THEN
    RAISE EXCEPTION 'UNKNOWN_TOPIC_OR_PARTITION: topic "%" does not exist', topic USING ERRCODE = '42704';
  END IF;
  EXECUTE format('DROP TRIGGER IF EXISTS %I ON %s', capture_trigger_name(), source);
  EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE ON %s FOR EACH ROW EXECUTE FUNCTION %I.capture_change(%L, %L, %L, %L)',
    capture_trigger_name(), source, current_schema(), topic, tombstones, server, decimal_handling_mode);
  IF NOT snapshot THEN RETURN 0; END IF;

  SELECT n.nspname, c.relname INTO rel_schema, rel_name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = source;
  FOR r IN EXECUTE format('SELECT row_to_json(t) AS j, row_number() OVER () AS i, count(*) OVER () AS n FROM (SELECT * FROM %s %s) t', source,
    (SELECT 'ORDER BY ' || string_agg(quote_ident(a.attname), ', ' ORDER BY k.ord)
     FROM pg_index i CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord) JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
     WHERE i.indrelid = source AND i.indisprimary))
  LOOP
    key := debezium_row(source, r.j, true, decimal_handling_mode);
    PERFORM send(topic, convert_to(key, 'UTF8'),
      convert_to(debezium_envelope(NULL, debezium_row(source, r.j, false, decimal_handling_mode), 'r', server, rel_schema, rel_name,
        CASE WHEN r.i = r.n THEN 'last' WHEN r.i = 1 THEN 'first' ELSE 'true' END,
        (extract(epoch FROM clock_timestamp()) * 1000000)::bigint, (pg_current_wal_insert_lsn() - '0/0')::bigint), 'UTF8'),
      '{}'::text[], '{}'::bytea[], NULL);
    sent := sent + 1;
  END LOOP;
  RETURN sent;
END
$$;

-- uncapture(table): no more change events from the table; false if it was not captured.
CREATE FUNCTION uncapture(source regclass) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_trigger g WHERE g.tgrelid = source AND g.tgname = capture_trigger_name()) THEN RETURN false; END IF;
  EXECUTE format('DROP TRIGGER %I ON %s', capture_trigger_name(), source);
  RETURN true;
END
$$;

-- The captured tables and their settings.
CREATE VIEW captures AS
SELECT g.tgrelid::regclass AS source, a.args[1] AS topic, a.args[2]::boolean AS tombstones, a.args[3] AS name, a.args[4] AS decimal_handling_mode
FROM pg_trigger g
CROSS JOIN LATERAL (SELECT string_to_array(rtrim(encode(g.tgargs, 'escape'), '\000'), '\000') AS args) a
WHERE g.tgname = capture_trigger_name();

-- Pin the functions to this schema (the migration runs with it as the search path).
DO $$
DECLARE
  f regprocedure;
BEGIN
  FOR f IN
    SELECT p.oid::regprocedure FROM pg_proc p
    WHERE p.pronamespace = current_schema()::regnamespace
      AND p.proname IN ('debezium_float', 'debezium_unscaled_bytes', 'debezium_base64', 'debezium_value', 'debezium_row', 'debezium_envelope', 'capture_change', 'capture_trigger_name', 'capture', 'uncapture')
  LOOP
    EXECUTE format('ALTER FUNCTION %s SET search_path = %I, pg_temp', f, current_schema());
  END LOOP;
END
$$;

-- Down Migration
DROP VIEW captures;
DROP FUNCTION uncapture(regclass);
DROP FUNCTION capture(regclass, text, boolean, text, text, boolean);
DROP FUNCTION capture_trigger_name();
DROP FUNCTION capture_change();
DROP FUNCTION debezium_envelope(text, text, text, text, text, text, text, bigint, bigint);
DROP FUNCTION debezium_row(oid, json, boolean, text);
DROP FUNCTION debezium_value(json, oid, int, text);
DROP FUNCTION debezium_base64(bytea);
DROP FUNCTION debezium_unscaled_bytes(numeric);
DROP FUNCTION debezium_float(text);
DROP VIEW topic_records;
DROP FUNCTION records(text, int, bigint, timestamptz, bigint, text);
DROP VIEW partition_offsets;
DROP FUNCTION header_value(record_header[], text);
DROP TYPE record_header;
