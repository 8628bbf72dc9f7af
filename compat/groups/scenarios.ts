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
  '8 lag: CLI and /metrics': 'pgkafka groups and kafka_consumergroup_lag agree with OffsetFetch + ListOffsets on a group that is behind',
} as const;
export type GroupScenario = keyof typeof GROUP_SCENARIOS;

export const GROUP_PASSING: Record<GroupClient, readonly GroupScenario[]> = {
  kafkajs: [],
  'confluent-kafka-python': [],
  'confluent-kafka-javascript': [],
  'kafka-python': [],
  kcat: [],
};

/** Why a scenario is not in a client's list (FINDINGS.md has the details). */
export const GROUP_NOT_YET: Partial<Record<GroupClient, Partial<Record<GroupScenario, string>>>> = {};

export type GroupScenarioFns = Partial<Record<GroupScenario, () => Promise<void>>>;

export function runGroupScenarios(client: GroupClient, impls: GroupScenarioFns, timeoutMs = 60_000): void {
  for (const name of GROUP_PASSING[client]) {
    if (!impls[name]) throw new Error(`${client}: scenario "${name}" is allow-listed but not implemented`);
  }
  const names = process.env.COMPAT_ALL === '1' ? (Object.keys(GROUP_SCENARIOS) as GroupScenario[]).filter((n) => impls[n]) : GROUP_PASSING[client];
  for (const name of names) it(name, impls[name]!, timeoutMs);
}
