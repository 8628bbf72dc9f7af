// Bit sets of Kafka ACL operation codes (AclOperation) reported as
// "authorized operations" while no authorizer is configured: everything a
// resource type supports. An unrequested field is -2^31 (Kafka's sentinel).
const bits = (...ops: number[]) => ops.reduce((acc, op) => acc | (1 << op), 0);
const [READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, CREATE_TOKENS, DESCRIBE_TOKENS] =
  [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14];

export const NOT_REQUESTED = -2147483648;
export const TOPIC_OPERATIONS = bits(READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS);
export const CLUSTER_OPERATIONS = bits(CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, CREATE_TOKENS, DESCRIBE_TOKENS);
export const GROUP_OPERATIONS = bits(READ, DELETE, DESCRIBE);
