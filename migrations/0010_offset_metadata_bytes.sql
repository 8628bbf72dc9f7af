-- Up Migration

-- Offset commit metadata is kept as the bytes the client sent (its UTF-8
-- encoding), as Kafka keeps it in __consumer_offsets: text cannot hold a NUL
-- character, which Kafka accepts like any other.
ALTER TABLE committed_offsets ALTER COLUMN metadata TYPE bytea USING convert_to(metadata, 'UTF8');
ALTER TABLE txn_offsets ALTER COLUMN metadata TYPE bytea USING convert_to(metadata, 'UTF8');

-- Down Migration
-- Metadata holding a NUL character cannot go back to text: it is cut at the first NUL.
ALTER TABLE committed_offsets ALTER COLUMN metadata TYPE text USING convert_from(substring(metadata FROM 1 FOR coalesce(nullif(position('\x00'::bytea IN metadata), 0) - 1, length(metadata))), 'UTF8');
ALTER TABLE txn_offsets ALTER COLUMN metadata TYPE text USING convert_from(substring(metadata FROM 1 FOR coalesce(nullif(position('\x00'::bytea IN metadata), 0) - 1, length(metadata))), 'UTF8');
