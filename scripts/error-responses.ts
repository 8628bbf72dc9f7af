// What each API's error response echoes of its request, as Apache Kafka's
// `<Api>Request.getErrorResponse` builds it (clients/.../common/requests). The
// generator turns each entry into a typed `errorResponse(request, version,
// errorCode)` in the API's generated file: the listed resources are echoed,
// and every echoed struct with an `ErrorCode` field (the top level too) gets
// the error. An API with no entry answers its top-level ErrorCode only, as
// most single-resource APIs do.
//
// Expressions are TypeScript over `request`, `version` and, inside an echoed
// array, `e` (the request element being echoed), so the type checker verifies
// every request field named here; the generator verifies the response
// fields. Only Kafka's "unknown" values that differ from the spec's default
// are written; error messages are left null (Kafka's fallback: the error's
// own description), so no internal detail reaches a client.

/** What one response struct echoes. */
export interface Echo {
  /** Response field ← expression. */
  set?: Record<string, string>;
  /** Response array ← the request array(s) it echoes (concatenated; only one is populated at any version). */
  arrays?: Record<string, EchoArray | EchoArray[]>;
  /** Fields besides `ErrorCode` that carry the error (AddPartitionsToTxn's PartitionErrorCode). */
  errorFields?: string[];
}

export interface EchoArray extends Echo {
  /** The request array echoed, an expression (a `?? []` for a nullable one). */
  from: string;
  /** Versions in which Kafka echoes it (outside them the array is empty). */
  versions?: string;
}

export interface ErrorResponseEntry extends Echo {
  /** No response at all (Kafka then closes the connection): Produce with acks=0. */
  noResponseWhen?: string;
  /** Leave the top-level ErrorCode alone (Metadata v13's is for REBOOTSTRAP_REQUIRED only). */
  topLevelError?: false;
}

const NO_NODE = { nodeId: '-1', host: '""', port: '-1' };

export const ERROR_RESPONSES: Record<string, ErrorResponseEntry> = {
  Produce: {
    noResponseWhen: 'request.acks === 0',
    arrays: {
      responses: {
        from: 'request.topicData',
        set: { name: 'e.name', topicId: 'e.topicId' },
        arrays: { partitionResponses: { from: 'e.partitionData', set: { index: 'e.index', baseOffset: '-1n' } } },
      },
    },
  },
  // v13+: the top-level code alone, partitions only before (older clients know no top-level code).
  Fetch: {
    set: { sessionId: 'request.sessionId' },
    arrays: {
      responses: {
        from: 'request.topics',
        versions: '0-12',
        set: { topic: 'e.topic', topicId: 'e.topicId' },
        arrays: { partitions: { from: 'e.partitions', set: { partitionIndex: 'e.partition', highWatermark: '-1n' } } },
      },
    },
  },
  ListOffsets: {
    arrays: {
      topics: { from: 'request.topics', set: { name: 'e.name' }, arrays: { partitions: { from: 'e.partitions', set: { partitionIndex: 'e.partitionIndex' } } } },
    },
  },
  Metadata: {
    topLevelError: false,
    arrays: { topics: { from: 'request.topics ?? []', set: { name: 'e.name ?? ""', topicId: 'e.topicId' } } },
  },
  OffsetCommit: {
    arrays: {
      topics: {
        from: 'request.topics',
        set: { name: 'e.name', topicId: 'e.topicId' },
        arrays: { partitions: { from: 'e.partitions', set: { partitionIndex: 'e.partitionIndex' } } },
      },
    },
  },
  // v0-1: every partition; v2-7: the top-level code alone; v8+: each group's code.
  OffsetFetch: {
    arrays: {
      topics: {
        from: 'request.topics ?? []',
        versions: '0-1',
        set: { name: 'e.name' },
        arrays: { partitions: { from: 'e.partitionIndexes', set: { partitionIndex: 'e', committedOffset: '-1n', metadata: '""' } } },
      },
      groups: { from: 'request.groups', set: { groupId: 'e.groupId' } },
    },
  },
  FindCoordinator: {
    set: NO_NODE,
    arrays: { coordinators: { from: 'request.coordinatorKeys', set: { key: 'e', ...NO_NODE } } },
  },
  JoinGroup: { set: { protocolName: 'version >= 7 ? null : ""' } },
  DescribeGroups: { arrays: { groups: { from: 'request.groups', set: { groupId: 'e' } } } },
  CreateTopics: { arrays: { topics: { from: 'request.topics', set: { name: 'e.name' } } } },
  DeleteTopics: {
    arrays: {
      responses: [
        { from: 'request.topicNames', set: { name: 'e' } },
        { from: 'request.topics', set: { name: 'e.name', topicId: 'e.topicId' } },
      ],
    },
  },
  DeleteRecords: {
    arrays: {
      topics: {
        from: 'request.topics',
        set: { name: 'e.name' },
        arrays: { partitions: { from: 'e.partitions', set: { partitionIndex: 'e.partitionIndex', lowWatermark: '-1n' } } },
      },
    },
  },
  InitProducerId: { set: { producerId: '-1n', producerEpoch: '-1' } },
  OffsetForLeaderEpoch: {
    arrays: {
      topics: { from: 'request.topics', set: { topic: 'e.topic' }, arrays: { partitions: { from: 'e.partitions', set: { partition: 'e.partition' } } } },
    },
  },
  // v4+ (brokers' batched form) answers the top-level code.
  AddPartitionsToTxn: {
    arrays: {
      resultsByTopicV3AndBelow: {
        from: 'request.v3AndBelowTopics',
        set: { name: 'e.name' },
        arrays: { resultsByPartition: { from: 'e.partitions', set: { partitionIndex: 'e' }, errorFields: ['partitionErrorCode'] } },
      },
    },
  },
  TxnOffsetCommit: {
    arrays: {
      topics: { from: 'request.topics', set: { name: 'e.name' }, arrays: { partitions: { from: 'e.partitions', set: { partitionIndex: 'e.partitionIndex' } } } },
    },
  },
  CreateAcls: { arrays: { results: { from: 'request.creations' } } },
  DeleteAcls: { arrays: { filterResults: { from: 'request.filters' } } },
  DescribeConfigs: { arrays: { results: { from: 'request.resources', set: { resourceType: 'e.resourceType', resourceName: 'e.resourceName' } } } },
  AlterConfigs: { arrays: { responses: { from: 'request.resources', set: { resourceType: 'e.resourceType', resourceName: 'e.resourceName' } } } },
  IncrementalAlterConfigs: { arrays: { responses: { from: 'request.resources', set: { resourceType: 'e.resourceType', resourceName: 'e.resourceName' } } } },
  AlterReplicaLogDirs: {
    arrays: {
      results: {
        from: 'request.dirs.flatMap((d) => d.topics)',
        set: { topicName: 'e.name' },
        arrays: { partitions: { from: 'e.partitions', set: { partitionIndex: 'e' } } },
      },
    },
  },
  CreatePartitions: { arrays: { results: { from: 'request.topics', set: { name: 'e.name' } } } },
  // Kafka's owner and requester of a token it could not create: User:ANONYMOUS.
  CreateDelegationToken: {
    set: {
      principalType: '"User"',
      principalName: '"ANONYMOUS"',
      tokenRequesterPrincipalType: '"User"',
      tokenRequesterPrincipalName: '"ANONYMOUS"',
      issueTimestampMs: '-1n',
      expiryTimestampMs: '-1n',
      maxTimestampMs: '-1n',
    },
  },
  DeleteGroups: { arrays: { results: { from: 'request.groupsNames', set: { groupId: 'e' } } } },
  ElectLeaders: {
    arrays: {
      replicaElectionResults: {
        from: 'request.topicPartitions ?? []',
        set: { topic: 'e.topic' },
        arrays: { partitionResult: { from: 'e.partitions', set: { partitionId: 'e' } } },
      },
    },
  },
  AlterPartitionReassignments: {
    arrays: {
      responses: { from: 'request.topics', set: { name: 'e.name' }, arrays: { partitions: { from: 'e.partitions', set: { partitionIndex: 'e.partitionIndex' } } } },
    },
  },
  ListPartitionReassignments: {
    arrays: {
      topics: { from: 'request.topics ?? []', set: { name: 'e.name' }, arrays: { partitions: { from: 'e.partitionIndexes', set: { partitionIndex: 'e' } } } },
    },
  },
  DescribeClientQuotas: { set: { entries: 'null' } },
  // Kafka echoes one result per user asked about, without the name.
  DescribeUserScramCredentials: { arrays: { results: { from: 'request.users ?? []' } } },
  AlterUserScramCredentials: {
    arrays: {
      results: [
        { from: 'request.deletions', set: { user: 'e.name' } },
        { from: 'request.upsertions', set: { user: 'e.name' } },
      ],
    },
  },
  DescribeProducers: {
    arrays: {
      topics: { from: 'request.topics', set: { name: 'e.name' }, arrays: { partitions: { from: 'e.partitionIndexes', set: { partitionIndex: 'e' } } } },
    },
  },
  DescribeTransactions: { arrays: { transactionStates: { from: 'request.transactionalIds', set: { transactionalId: 'e' } } } },
  DescribeTopicPartitions: { arrays: { topics: { from: 'request.topics', set: { name: 'e.name' } } } },
};

/** A response struct as the generator sees it. */
export interface EchoStruct {
  tsName: string;
  /** Field names (camelCase) and, for a field holding an array of structs, that struct. */
  fields: Map<string, EchoStruct | 'scalar' | 'array'>;
  /** The struct's own `ErrorCode` field, camelCase, if it has one. */
  hasErrorCode: boolean;
}

/**
 * The error-response builder's source for one API. `cond(range)` renders a
 * spec version range as a condition on `version` (true when always).
 */
export function genErrorResponse(api: string, requestType: string, responseType: string, top: EchoStruct, cond: (versions: string) => string | boolean): string[] {
  const entry = ERROR_RESPONSES[api] ?? {};
  const body = (s: EchoStruct, echo: Echo, withError: boolean): string[] => {
    const props: string[] = [];
    const check = (field: string) => {
      if (!s.fields.has(field)) throw new Error(`error response of ${api}: ${s.tsName} has no field ${field}`);
    };
    if (withError && s.hasErrorCode) props.push('errorCode,');
    for (const f of echo.errorFields ?? []) {
      check(f);
      props.push(`${f}: errorCode,`);
    }
    for (const [f, expr] of Object.entries(echo.set ?? {})) {
      check(f);
      props.push(`${f}: ${expr},`);
    }
    for (const [f, spec] of Object.entries(echo.arrays ?? {})) {
      check(f);
      const sub = s.fields.get(f);
      if (typeof sub !== 'object') throw new Error(`error response of ${api}: ${s.tsName}.${f} is not an array of structs`);
      const sources = (Array.isArray(spec) ? spec : [spec]).map((a) => {
        const from = /^[\w.]+$/.test(a.from) ? a.from : `(${a.from})`;
        const map = `${from}.map((e) => ({`;
        const inner = body(sub, a, true);
        const mapped = inner.length === 0 ? `${from}.map(() => ({}))` : [map, ...inner.map((l) => '  ' + l), '}))'].join('\n');
        const c = a.versions === undefined ? true : cond(a.versions);
        if (c === false) return '[]';
        return c === true ? mapped : `(${c} ? ${mapped} : [])`;
      });
      const value = sources.length === 1 ? sources[0]! : `[${sources.map((x) => `...${x}`).join(', ')}]`;
      props.push(...`${f}: ${value},`.split('\n'));
    }
    return props;
  };
  const props = body(top, entry, entry.topLevelError !== false);
  const out = [
    `/** The answer to a request that failed inside the broker (Kafka's ${requestType}.getErrorResponse): its resources echoed with \`errorCode\`. */`,
    `function error${responseType}(request: ${requestType}, version: number, errorCode: number): Input<${responseType}> | null {`,
  ];
  if (entry.noResponseWhen) out.push(`  if (${entry.noResponseWhen}) return null;`);
  if (props.length === 0) out.push('  return {};');
  else out.push('  return {', ...props.map((l) => '    ' + l), '  };');
  out.push('}');
  return out;
}
