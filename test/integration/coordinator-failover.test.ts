// Coordinator failover between real broker processes on one schema: after a
// kill -9 the survivor serves the dead broker's groups; when that broker
// comes back, a live holder keeps a slot while a group of it is rebalancing
// and hands it back only once the group is quiet; Metadata and
// FindCoordinator never name the dead broker once its registration and
// lease have lapsed. A second broker started with a node id a live broker
// holds is refused, naming that broker; one restarted after a crash starts.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { desiredOwner, slotOf } from '../../src/coordinator/coordination.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { CreateTopicsApi, FindCoordinatorApi, JoinGroupApi, MetadataApi, OffsetCommitApi, SyncGroupApi } from '../../src/protocol/messages/index.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { freePort, spawnBroker, type BrokerProcess } from '../support/broker-process.js';
import { RawClient } from '../support/raw-client.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let survivor: TestBroker;
const children: BrokerProcess[] = [];

beforeAll(async () => {
  survivor = await startTestBroker({ nodeId: 1 });
  const client = await RawClient.connect(survivor.bootstrap);
  const res = await client.request(CreateTopicsApi, 7, { topics: [{ name: 'failover-topic', numPartitions: 1, replicationFactor: 1 }], timeoutMs: 5000 });
  client.close();
  expect(res.topics[0]!.errorCode).toBe(ErrorCode.NONE);
});
afterAll(async () => {
  for (const c of children) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
  await survivor?.destroy();
});

async function spawnNode(nodeId: number, port: number): Promise<BrokerProcess> {
  const child = await spawnBroker({ DATABASE_URL: survivor.databaseUrl, PGKAFKA_SCHEMA: survivor.schema, PGKAFKA_NODE_ID: String(nodeId), PGKAFKA_PORT: String(port) });
  children.push(child);
  return child;
}

/** Runs `pgkafka start` expecting it to exit during start-up: its exit code and output (a broker that starts anyway is killed). */
function startExpectingExit(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'start'], {
    cwd: fileURLToPath(new URL('../..', import.meta.url)),
    env: { ...process.env, PGKAFKA_HOST: '127.0.0.1', PGKAFKA_ADVERTISED_HOST: '127.0.0.1', PGKAFKA_LOG_LEVEL: 'info', PGKAFKA_METRICS_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (d: Buffer) => {
    output += d;
    if (output.includes('pgkafka broker listening')) child.kill('SIGKILL');
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) => child.on('exit', (code) => (clearTimeout(timer), resolve({ code, output }))));
}

async function kill(child: BrokerProcess): Promise<void> {
  child.child.kill('SIGKILL');
  await child.exited;
}

async function coordinatorOf(bootstrap: string, group: string): Promise<{ nodeId: number; port: number; errorCode: number }> {
  const client = await RawClient.connect(bootstrap);
  try {
    const res = await client.request(FindCoordinatorApi, 4, { keyType: 0, coordinatorKeys: [group] });
    const c = res.coordinators[0]!;
    return { nodeId: c.nodeId, port: c.port, errorCode: c.errorCode };
  } finally {
    client.close();
  }
}

async function until(what: string, check: () => Promise<boolean> | boolean, deadlineMs = 20_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(100);
  }
}

/** A group id of the slot range the hashing gives to `nodeId` among `nodes`. */
function groupFor(prefix: string, nodeId: number, nodes: number[]): string {
  for (let i = 0; ; i++) if (desiredOwner(slotOf(`${prefix}-${i}`), nodes) === nodeId) return `${prefix}-${i}`;
}

async function holderOf(group: string): Promise<{ node_id: number; epoch: string; live: boolean }> {
  const [row] = await survivor.query<{ node_id: number; epoch: string; live: boolean }>('SELECT node_id, epoch::text, expires_at > now() AS live FROM coordinator_slots WHERE slot = $1', [
    slotOf(group),
  ]);
  return row!;
}

describe('a killed coordinator that comes back', () => {
  it('gets a slot back only once no group of it is rebalancing on the live holder', { timeout: 90_000 }, async () => {
    const port = await freePort();
    let child = await spawnNode(2, port);
    const group = groupFor('failover-rebalancing', 2, [1, 2]);
    await until('the second broker coordinates the group', async () => (await coordinatorOf(survivor.bootstrap, group)).nodeId === 2 && (await holderOf(group)).node_id === 2);

    await kill(child);
    await until('the survivor serves the group', () => survivor.context.coordination.owns(group));

    // A member joins on the survivor and the group waits in CompletingRebalance for the leader's SyncGroup.
    const member = await RawClient.connect(survivor.bootstrap);
    try {
      const joining = {
        groupId: group,
        sessionTimeoutMs: 60_000,
        rebalanceTimeoutMs: 60_000,
        groupInstanceId: null,
        protocolType: 'consumer',
        protocols: [{ name: 'range', metadata: Buffer.alloc(0) }],
        reason: null,
      };
      const { memberId } = await member.request(JoinGroupApi, 7, { ...joining, memberId: '' });
      const join = await member.request(JoinGroupApi, 7, { ...joining, memberId });
      expect(join.errorCode).toBe(ErrorCode.NONE);
      const held = await holderOf(group);
      expect(held.node_id).toBe(1);

      child = await spawnNode(2, port);
      const back = `127.0.0.1:${port}`;
      // The broker's other slots, whose groups are quiet, are handed back to it...
      const quietGroup = groupFor('failover-quiet', 2, [1, 2]);
      await until('a quiet slot is handed back', async () => (await coordinatorOf(survivor.bootstrap, quietGroup)).nodeId === 2);
      // ...but not the rebalancing group's, over several heartbeats of both brokers.
      for (let i = 0; i < 20; i++) {
        expect(survivor.context.coordination.owns(group)).toBe(true);
        expect(await holderOf(group)).toEqual(held);
        expect((await coordinatorOf(survivor.bootstrap, group)).nodeId).toBe(1);
        expect((await coordinatorOf(back, group)).nodeId).toBe(1);
        await sleep(400);
      }

      // The rebalance completes; the group is quiet and its slot goes to the broker it belongs to.
      const sync = await member.request(SyncGroupApi, 5, {
        groupId: group,
        generationId: join.generationId,
        memberId,
        groupInstanceId: null,
        protocolType: 'consumer',
        protocolName: 'range',
        assignments: [{ memberId, assignment: Buffer.alloc(0) }],
      });
      expect(sync.errorCode).toBe(ErrorCode.NONE);
      await until('the quiet slot is handed back', async () => (await coordinatorOf(survivor.bootstrap, group)).nodeId === 2, 15_000);
      expect(survivor.context.coordination.owns(group)).toBe(false);
      // The new coordinator restored the group: the member commits there with its generation.
      const there = await RawClient.connect(back);
      try {
        const commit = () =>
          there.request(OffsetCommitApi, 8, {
            groupId: group,
            generationIdOrMemberEpoch: join.generationId,
            memberId,
            groupInstanceId: null,
            topics: [{ name: 'failover-topic', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: null }] }],
          });
        let errorCode = -1;
        await until(
          'the member commits on the broker the group came back to',
          async () => {
            errorCode = (await commit()).topics[0]!.partitions[0]!.errorCode;
            return errorCode !== ErrorCode.NOT_COORDINATOR;
          },
          5000,
        );
        expect(errorCode).toBe(ErrorCode.NONE);
      } finally {
        there.close();
      }
    } finally {
      member.close();
      await kill(child);
    }
  });
});

describe('a killed broker', () => {
  it('is named by neither Metadata nor FindCoordinator once its registration and lease have lapsed', { timeout: 60_000 }, async () => {
    const child = await spawnNode(3, await freePort());
    const group = groupFor('failover-naming', 3, [1, 3]);
    await until('the broker coordinates the group', async () => {
      const held = await holderOf(group);
      return held.node_id === 3 && held.live && (await coordinatorOf(survivor.bootstrap, group)).nodeId === 3 && survivor.context.liveBrokers().some((b) => b.nodeId === 3);
    });
    await kill(child);
    // When its registration and the group's lease lapse, by the database's clock (nothing renews them now).
    const [lapse] = await survivor.query<{ registration_ms: number; lease_ms: number }>(
      `SELECT extract(epoch FROM b.last_seen + interval '9 seconds' - now()) * 1000 AS registration_ms, extract(epoch FROM s.expires_at - now()) * 1000 AS lease_ms
       FROM brokers b, coordinator_slots s WHERE b.node_id = 3 AND s.slot = $1`,
      [slotOf(group)],
    );
    const registrationLapsed = Date.now() + Number(lapse!.registration_ms);
    const leaseLapsed = Date.now() + Number(lapse!.lease_ms);
    expect(leaseLapsed).toBeGreaterThan(Date.now());

    const client = await RawClient.connect(survivor.bootstrap);
    let askedAfterLapse = 0;
    try {
      // Asked every 50 ms from before the lapse until well past the survivor's next heartbeat.
      while (Date.now() < leaseLapsed + 4000) {
        const asked = Date.now();
        const md = await client.request(MetadataApi, 12, { topics: [] });
        const fc = await client.request(FindCoordinatorApi, 4, { keyType: 0, coordinatorKeys: [group] });
        // 20 ms for the two clocks and the read of `lapse` (which is later than the truth).
        if (asked > registrationLapsed + 20) expect(md.brokers.map((b) => b.nodeId)).not.toContain(3);
        if (asked > leaseLapsed + 20) {
          askedAfterLapse++;
          expect(fc.coordinators[0]!.nodeId).not.toBe(3);
        }
        await sleep(50);
      }
    } finally {
      client.close();
    }
    expect(askedAfterLapse).toBeGreaterThan(10);
    await until('the survivor serves the group', async () => survivor.context.coordination.owns(group) && (await coordinatorOf(survivor.bootstrap, group)).nodeId === 1, 5000);
  });
});

describe('node ids', () => {
  it('refuse a second live broker with the same node id, naming the live one, and the first keeps serving', { timeout: 60_000 }, async () => {
    const group = groupFor('failover-duplicate', 1, [1]);
    await until('the survivor serves the group', () => survivor.context.coordination.owns(group));
    const before = await survivor.query<{ slot: number; instance_id: string; epoch: string }>('SELECT slot, instance_id, epoch::text FROM coordinator_slots ORDER BY slot');

    const { code, output } = await startExpectingExit({ DATABASE_URL: survivor.databaseUrl, PGKAFKA_SCHEMA: survivor.schema, PGKAFKA_NODE_ID: '1', PGKAFKA_PORT: String(await freePort()) });
    expect(output).not.toContain('pgkafka broker listening');
    expect(code).not.toBe(0);
    expect(code).not.toBeNull();
    expect(output).toContain('Node id 1 is in use by a live broker');
    expect(output).toContain(`127.0.0.1:${survivor.port}`);
    expect(output).toContain('PGKAFKA_NODE_ID');

    // Nothing was taken from the first broker, which still serves its group.
    expect(await survivor.query('SELECT slot, instance_id, epoch::text FROM coordinator_slots ORDER BY slot')).toEqual(before);
    expect(survivor.context.coordination.owns(group)).toBe(true);
    const client = await RawClient.connect(survivor.bootstrap);
    try {
      const commit = await client.request(OffsetCommitApi, 8, {
        groupId: group,
        generationIdOrMemberEpoch: -1,
        memberId: '',
        groupInstanceId: null,
        topics: [{ name: 'failover-topic', partitions: [{ partitionIndex: 0, committedOffset: 4n, committedLeaderEpoch: -1, committedMetadata: null }] }],
      });
      expect(commit.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE);
      const md = await client.request(MetadataApi, 12, { topics: [] });
      expect(md.brokers.map((b) => [b.nodeId, b.port])).toEqual([[1, survivor.port]]);
    } finally {
      client.close();
    }
  });

  it('let a broker restarted at once after a crash start with its node id, and serve its groups again', { timeout: 60_000 }, async () => {
    const port = await freePort();
    const group = groupFor('failover-restart', 4, [1, 4]);
    const first = await spawnNode(4, port);
    await until('the broker coordinates the group', async () => (await holderOf(group)).node_id === 4 && (await coordinatorOf(survivor.bootstrap, group)).nodeId === 4);
    await kill(first);
    const restarted = await spawnNode(4, port);
    try {
      await until('the restarted broker coordinates the group', async () => {
        const held = await holderOf(group);
        const c = await coordinatorOf(`127.0.0.1:${port}`, group);
        return held.node_id === 4 && held.live && c.nodeId === 4 && c.port === port;
      });
    } finally {
      await kill(restarted);
    }
  });
});
