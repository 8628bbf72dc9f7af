-- Up Migration

-- Kafka ACL bindings (CreateAcls/DescribeAcls/DeleteAcls), with Kafka's own
-- codes: resource_type (ResourceType), pattern_type (3 LITERAL, 4 PREFIXED),
-- operation (AclOperation), permission_type (2 DENY, 3 ALLOW). Every broker
-- keeps them all in memory and reloads them on NOTIFY <schema>_acls.
CREATE TABLE acls (
  resource_type smallint NOT NULL,
  resource_name text NOT NULL,
  pattern_type smallint NOT NULL CHECK (pattern_type IN (3, 4)),
  principal text NOT NULL,
  host text NOT NULL,
  operation smallint NOT NULL,
  permission_type smallint NOT NULL CHECK (permission_type IN (2, 3)),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (resource_type, resource_name, pattern_type, principal, host, operation, permission_type)
);

-- Down Migration
DROP TABLE acls;
