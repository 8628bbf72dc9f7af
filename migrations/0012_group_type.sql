-- Up Migration

-- The kind of group a row holds, as Kafka's GroupType names it ('classic',
-- later 'consumer' for KIP-848 and 'share'): the members column is that
-- type's JSON. Existing rows are classic groups. The default stays 'classic',
-- so a row written without a type (by SQL older than this column) is one.
ALTER TABLE groups ADD COLUMN type text NOT NULL DEFAULT 'classic';

-- Down Migration
ALTER TABLE groups DROP COLUMN type;
