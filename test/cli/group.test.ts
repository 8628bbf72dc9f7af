// `pgkafka group …` and `pgkafka consume -g` run as processes against a real
// broker: a group member commits what it prints and resumes there, list,
// describe with lag (text and JSON, an active kafkajs member shown with its
// partitions), seek as a dry run by default and applied with --execute (to
// start, end, an offset, a time, a shift), refused while members are active,
// and delete.
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { pgkafka } from '../support/cli-process.js';
import { within } from '../support/wait.js';

let broker: TestBroker;
const run = (args: string[], stdin?: string) => pgkafka(args, { stdin, env: { PGKAFKA_BROKERS: broker.bootstrap } });

interface Described {
  group: string;
  state: string;
  members: number;
  partitions: { topic: string; partition: number; currentOffset: number | null; logEndOffset: number; lag: number | null; memberId: string | null; clientId: string | null }[];
}
const describeJson = async (group: string) => (JSON.parse((await run(['group', 'describe', group, '-f', 'json'])).out) as Described[])[0]!;
const committed = async (group: string) => (await describeJson(group)).partitions.map((p) => `${p.partition}:${p.currentOffset}`);

beforeAll(async () => {
  broker = await startTestBroker({ autoCreateTopicsEnable: false, groupInitialRebalanceDelayMs: 0 });
  await run(['topic', 'create', 'events', '-p', '2']);
  await run(['produce', 'events', '-p', '0'], 'a0\na1\na2\na3\n');
  await run(['produce', 'events', '-p', '1'], 'b0\nb1\n');
});
afterAll(async () => {
  await broker?.destroy();
});

describe('pgkafka group', { timeout: 180_000 }, () => {
  it('consumes as a group member, commits what it printed, and resumes there', async () => {
    const first = await run(['consume', 'events', '-g', 'readers', '-n', '3', '-f', '%p:%v\\n']);
    expect(first.code).toBe(0);
    expect(first.out.trim().split('\n')).toHaveLength(3);
    const second = await run(['consume', 'events', '-g', 'readers', '-n', '3', '-f', '%p:%v\\n']);
    // Together, each record exactly once.
    expect([...first.out.trim().split('\n'), ...second.out.trim().split('\n')].sort()).toEqual(['0:a0', '0:a1', '0:a2', '0:a3', '1:b0', '1:b1']);
    const described = await describeJson('readers');
    expect(described).toMatchObject({ group: 'readers', state: 'Empty', members: 0 });
    expect(described.partitions).toEqual([
      { topic: 'events', partition: 0, currentOffset: 4, logEndOffset: 4, lag: 0, memberId: null, clientId: null, host: null },
      { topic: 'events', partition: 1, currentOffset: 2, logEndOffset: 2, lag: 0, memberId: null, clientId: null, host: null },
    ]);
  });

  it('lists groups and describes lag as a table', async () => {
    await run(['produce', 'events', '-p', '1'], 'b2\n');
    expect((await run(['group', 'list'])).out).toBe('GROUP    STATE  PROTOCOL-TYPE\nreaders  Empty  consumer\n');
    const text = (await run(['group', 'describe', 'readers'])).out;
    expect(text).toBe(
      'GROUP      readers\nSTATE      Empty\nMEMBERS    0\nTOTAL-LAG  1\n\n' +
        'TOPIC   PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG  MEMBER-ID  CLIENT-ID  HOST\n' +
        'events  0          4               4               0    -          -          -\n' +
        'events  1          2               3               1    -          -          -\n',
    );
  });

  it('seeks as a dry run unless --execute, to start, end, an offset, a time and by a shift', async () => {
    const dry = await run(['group', 'seek', 'readers', '--to', 'start']);
    expect(dry.out).toBe(
      'GROUP    TOPIC   PARTITION  CURRENT-OFFSET  NEW-OFFSET\nreaders  events  0          4               0\nreaders  events  1          2               0\n\nDry run: nothing committed. Pass --execute to apply.\n',
    );
    expect(await committed('readers')).toEqual(['0:4', '1:2']);

    expect((await run(['group', 'seek', 'readers', '--to', 'start', '--execute'])).code).toBe(0);
    expect(await committed('readers')).toEqual(['0:0', '1:0']);
    await run(['group', 'seek', 'readers', '--shift-by', '2', '--execute']);
    expect(await committed('readers')).toEqual(['0:2', '1:2']);
    await run(['group', 'seek', 'readers', '--shift-by', '-5', '--execute', '--topics', 'events']);
    expect(await committed('readers')).toEqual(['0:0', '1:0']);
    await run(['group', 'seek', 'readers', '--to', 'end', '--execute']);
    expect(await committed('readers')).toEqual(['0:4', '1:3']);
    await run(['group', 'seek', 'readers', '--to', '1', '--execute']);
    expect(await committed('readers')).toEqual(['0:1', '1:1']);
    const json = JSON.parse((await run(['group', 'seek', 'readers', '--to', '@0', '-f', 'json'])).out) as { executed: boolean; partitions: unknown[] };
    expect(json).toEqual({
      group: 'readers',
      executed: false,
      partitions: [
        { topic: 'events', partition: 0, currentOffset: 1, newOffset: 0 },
        { topic: 'events', partition: 1, currentOffset: 1, newOffset: 0 },
      ],
    });
    expect((await run(['group', 'seek', 'readers', '--to', `@${Date.now() + 3_600_000}`, '--execute'])).code).toBe(0);
    expect(await committed('readers')).toEqual(['0:4', '1:3']);
    expect((await run(['group', 'seek', 'readers'])).code).toBe(2);
    expect((await run(['group', 'seek', 'readers', '--to', 'start', '--shift-by', '1'])).code).toBe(2);
  });

  it("shows an active member's partitions, and refuses to seek while it is active", async () => {
    const kafka = new Kafka({ brokers: [broker.bootstrap], clientId: 'live-client', logLevel: logLevel.NOTHING });
    const consumer = kafka.consumer({ groupId: 'live' });
    const seen: string[] = [];
    await consumer.connect();
    await consumer.subscribe({ topic: 'events', fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void seen.push(String(message.value)) });
    try {
      expect(await within(30_000, () => seen.length === 7)).not.toBe(-1);
      expect(await within(60_000, async () => (await describeJson('live')).partitions.every((p) => p.currentOffset !== null && p.lag === 0))).not.toBe(-1);
      const live = await describeJson('live');
      expect(live).toMatchObject({ state: 'Stable', members: 1 });
      expect(live.partitions.map((p) => p.clientId)).toEqual(['live-client', 'live-client']);
      expect(live.partitions[0]!.memberId).toMatch(/^live-client-/);
      const refused = await run(['group', 'seek', 'live', '--to', 'start', '--execute']);
      expect(refused).toMatchObject({ code: 1, err: "pgkafka: Assignments can only be reset if the group 'live' is inactive, but the current state is Stable.\n" });
      const busy = await run(['group', 'delete', 'live']);
      expect(busy).toMatchObject({ code: 1, out: 'GROUP  STATUS\nlive   NON_EMPTY_GROUP\n' });
    } finally {
      await consumer.disconnect();
    }
  });

  it('deletes groups', async () => {
    expect((await run(['group', 'delete', 'readers'])).out).toBe('GROUP    STATUS\nreaders  OK\n');
    expect((await run(['group', 'list', '-f', 'json'])).out).not.toMatch(/readers/);
    expect((await run(['group', 'delete', 'readers'])).out).toBe('GROUP    STATUS\nreaders  GROUP_ID_NOT_FOUND\n');
  });
});
