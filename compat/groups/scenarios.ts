// The consumer-group allow-list: per client, the scenarios that pass against
// pgkafka today. Each test file implements scenarios and calls
// `runGroupScenarios`, which registers exactly the allow-listed ones (no .skip
// anywhere). A scenario left out says why in NOT_YET (details in FINDINGS.md).
// With COMPAT_ALL=1 every implemented scenario runs, allow-listed or not.
import { it } from 'vitest';

export const GROUP_CLIENTS = ['kafkajs', 'confluent-kafka-python', 'confluent-kafka-javascript', 'kafka-python', 'kcat'] as const;
export type GroupClient = (typeof GROUP_CLIENTS)[number];

export const GROUP_SCENARIOS = {
  '1 spread: 30 members, 12 partitions': '12 members own one partition each, 18 own none; 1200 keyed records consumed exactly once',
  '2 independent groups': 'two groups on one topic: the slow one lags (OffsetFetch vs ListOffsets, /metrics), the other is at 0',
  '3 max.poll.interval exceeded': 'a member that stops polling is removed, its partition moves, records after its last commit come again',
  '4 SIGKILL mid-batch': 'commit after processing, kill -9 mid-batch: the restarted member gets the uncommitted records, nothing skipped',
  '5 static member restart': 'a group.instance.id member restarted within session.timeout.ms: same generation, no new assignment for the others',
  '6 cooperative-sticky': 'a second member joins: the first revokes only the partitions that move and keeps consuming the rest',
  '7 replay': 'seek back to 0 reads the same records again; a new group reads everything (earliest) or only newer records (latest)',
  '8 lag: CLI and /metrics':
    "pgkafka groups and kafka_consumergroup_lag agree with OffsetFetch + ListOffsets on a group that is behind; the request and commit histograms count the sends and the member client's requests",
} as const;
export type GroupScenario = keyof typeof GROUP_SCENARIOS;

export const GROUP_PASSING: Record<GroupClient, readonly GroupScenario[]> = {
  kafkajs: ['1 spread: 30 members, 12 partitions', '2 independent groups', '3 max.poll.interval exceeded', '4 SIGKILL mid-batch', '7 replay', '8 lag: CLI and /metrics'],
  'confluent-kafka-python': [
    '1 spread: 30 members, 12 partitions',
    '2 independent groups',
    '3 max.poll.interval exceeded',
    '4 SIGKILL mid-batch',
    '5 static member restart',
    '6 cooperative-sticky',
    '7 replay',
    '8 lag: CLI and /metrics',
  ],
  'confluent-kafka-javascript': [
    '1 spread: 30 members, 12 partitions',
    '2 independent groups',
    '3 max.poll.interval exceeded',
    '5 static member restart',
    '6 cooperative-sticky',
    '7 replay',
    '8 lag: CLI and /metrics',
  ],
  'kafka-python': ['1 spread: 30 members, 12 partitions', '2 independent groups', '3 max.poll.interval exceeded', '4 SIGKILL mid-batch', '7 replay', '8 lag: CLI and /metrics'],
  kcat: ['2 independent groups', '7 replay'],
};

/**
 * Scenarios not written for a client, and why (FINDINGS.md has the details).
 * No scenario is left out because of the broker: every one written passes.
 */
export const GROUP_NOT_YET: Partial<Record<GroupClient, Partial<Record<GroupScenario, string>>>> = {
  kafkajs: {
    '5 static member restart': 'kafkajs 2.2.4 encodes groupInstanceId in JoinGroup v5 but its consumer never sets it',
    '6 cooperative-sticky': 'kafkajs 2.2.4 has only the eager protocol',
  },
  'confluent-kafka-javascript': {
    '4 SIGKILL mid-batch': 'members run in the test process (no SIGKILL); librdkafka is covered by confluent-kafka-python',
  },
  'kafka-python': {
    '5 static member restart': 'kafka-python 2.0.2 has no group.instance.id (JoinGroup v2)',
    '6 cooperative-sticky': 'kafka-python 2.0.2 has only the eager protocol',
  },
  kcat: {
    '1 spread: 30 members, 12 partitions': 'needs 30 kcat processes; librdkafka is covered in-process by the two confluent clients',
    '3 max.poll.interval exceeded': 'kcat polls continuously: it cannot be made to stop polling',
    '4 SIGKILL mid-batch': 'kcat commits by itself (auto commit), not after processing',
    '5 static member restart': 'covered for librdkafka by the confluent clients',
    '6 cooperative-sticky': 'covered for librdkafka by the confluent clients',
    '8 lag: CLI and /metrics': 'client-independent views, covered with the other clients',
  },
};

export type GroupScenarioFns = Partial<Record<GroupScenario, () => Promise<void>>>;

export function runGroupScenarios(client: GroupClient, impls: GroupScenarioFns, timeoutMs = 60_000): void {
  for (const name of GROUP_PASSING[client]) {
    if (!impls[name]) throw new Error(`${client}: scenario "${name}" is allow-listed but not implemented`);
  }
  const names = process.env.COMPAT_ALL === '1' ? (Object.keys(GROUP_SCENARIOS) as GroupScenario[]).filter((n) => impls[n]) : GROUP_PASSING[client];
  for (const name of names) it(name, impls[name]!, timeoutMs);
}
