// The broker's stable log codes: the `code` field of a log line that an
// operator may alert on or search for. Each is documented in
// docs/log-codes.md (meaning, what to do); test/observability/log-codes.test.ts
// fails when a code written anywhere in src/ is missing here or there, or
// when the level documented differs from the level below.

/** The level each code is logged at, by name (the code is `PGKAFKA_<name>`). */
const LEVELS = {
  // Requests and connections
  HANDLER_FAILED: 'error',
  COORDINATOR_STORAGE_FAILED: 'warn',
  TXN_ADD_FAILED: 'warn',
  FETCH_READ_FAILED: 'warn',
  AUTHENTICATION_FAILED: 'warn',
  AUTHORIZATION_DENIED: 'info',
  TLS_HANDSHAKE_FAILED: 'warn',
  CONNECTION_LIMIT: 'warn',
  // The log
  APPEND_FAILED: 'error',
  APPEND_OUTCOME_SETTLED: 'warn',
  DELETED_UNREAD: 'warn',
  CLEANER_DELETE_FAILED: 'warn',
  RETENTION_FAILED: 'warn',
  COMPACTION_FAILED: 'warn',
  COMPACTION_SKIPPED_BATCH: 'warn',
  ANNOUNCE_FAILED: 'warn',
  PARTITION_READ_BACK_FAILED: 'warn',
  BROKER_CONFIGS_RELOAD_FAILED: 'warn',
  BROKER_CONFIG_IGNORED: 'warn',
  // Producing from SQL (the outbox relay)
  SQL_SEND_RELAY_FAILED: 'warn',
  // Coordinators
  COORDINATOR_LEASE_FAILED: 'warn',
  LEADERSHIP_FAILED: 'warn',
  COORDINATOR_LEASE_LOST: 'warn',
  GROUP_STORE_FAILED: 'error',
  GROUP_MIGRATED: 'info',
  GROUP_REGEX_RESOLVED: 'info',
  GROUP_REGEX_EPOCH_BUMPED: 'info',
  GROUP_REGEX_RESOLVE_FAILED: 'warn',
  GROUP_CONFIGS_RELOAD_FAILED: 'warn',
  OFFSET_EXPIRY_FAILED: 'warn',
  TXN_TIMEOUT_CHECK_FAILED: 'warn',
  TXN_ABORT_FAILED: 'warn',
  TXN_ID_EXPIRY_FAILED: 'warn',
  // Security
  ACL_RELOAD_FAILED: 'warn',
  // PostgreSQL and the process
  POOL_CLIENT_ERROR: 'warn',
  LISTEN_LOST: 'warn',
  DATABASE_UNANSWERED: 'warn',
  DATABASE_STATEMENT_LOST: 'warn',
  LISTEN_RECONNECT_FAILED: 'warn',
  LISTEN_RESTORED: 'info',
  DATABASE_HOST_CHOSEN: 'info',
  EMBEDDED_PG_EXITED: 'error',
  EMBEDDED_PG_RESTARTED: 'info',
  EMBEDDED_PG_START_FAILED: 'warn',
  EMBEDDED_PG_LEFT_RUNNING: 'warn',
  HEARTBEAT_FAILED: 'warn',
  DUPLICATE_NODE_ID: 'error',
  START_FAILED: 'fatal',
} as const satisfies Record<string, 'info' | 'warn' | 'error' | 'fatal'>;

type Name = keyof typeof LEVELS;

/** `LogCode.HANDLER_FAILED` is `'PGKAFKA_HANDLER_FAILED'`. */
export const LogCode = Object.freeze(Object.fromEntries(Object.keys(LEVELS).map((name) => [name, `PGKAFKA_${name}`]))) as {
  readonly [N in Name]: `PGKAFKA_${N}`;
};
export type LogCode = (typeof LogCode)[Name];

/** Every code with its level. */
export const LOG_CODES: ReadonlyMap<string, (typeof LEVELS)[Name]> = new Map(Object.entries(LEVELS).map(([name, level]) => [`PGKAFKA_${name}`, level]));
