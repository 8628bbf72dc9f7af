-- Up Migration

-- SCRAM credentials (RFC 5802), one row per user and mechanism, as Kafka
-- keeps them: the salt, the iteration count, StoredKey = H(HMAC(SaltedPassword,
-- "Client Key")) and ServerKey = HMAC(SaltedPassword, "Server Key"). The
-- password itself is never stored; SASL/PLAIN is checked against these.
CREATE TABLE scram_credentials (
  user_name text NOT NULL,
  -- SCRAM-SHA-256 or SCRAM-SHA-512
  mechanism text NOT NULL CHECK (mechanism IN ('SCRAM-SHA-256', 'SCRAM-SHA-512')),
  salt bytea NOT NULL,
  stored_key bytea NOT NULL,
  server_key bytea NOT NULL,
  iterations int NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_name, mechanism)
);

-- Each broker's advertised endpoint per listener name, {"SASL_SSL": {"host", "port"}},
-- so Metadata can name every broker on the listener a client came in through.
ALTER TABLE brokers ADD COLUMN listeners jsonb;

-- Down Migration

ALTER TABLE brokers DROP COLUMN listeners;
DROP TABLE scram_credentials;
