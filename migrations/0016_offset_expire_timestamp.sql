-- Up Migration

-- OffsetCommit v2-v4 carry a retention time: Kafka 3.9 stores the offset with
-- an expire timestamp (commit time + retention) and expires it then, instead
-- of by offsets.retention.minutes (the "old expiration semantics" of
-- OffsetExpirationCondition). NULL: no explicit expiry.
ALTER TABLE committed_offsets ADD COLUMN expire_timestamp timestamptz;

-- Down Migration
ALTER TABLE committed_offsets DROP COLUMN expire_timestamp;
