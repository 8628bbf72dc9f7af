// kcat 1.7.1 (librdkafka 2.0.2) as a balanced consumer (-G): it commits by
// itself (enable.auto.commit, and on exit), so only scenarios about what a
// group reads and where it stands apply: 2 (a kcat group at lag 0 next to a
// group that is behind) and 7 without the seek (kcat -G cannot seek): a new
// group with earliest reads everything, with latest only newer records.
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { startTestBroker, type TestBroker } from '../../test/support/broker.js';
import { KCAT } from '../support/kcat.js';
import { runOk } from '../support/spawn.js';
import { runGroupScenarios } from './scenarios.js';
import { committed, createTopic, entries, eventually, highWatermarks, kit, metricsLag, produceEach, Proc, wireLag, type Kit } from './support.js';

let broker: TestBroker;
let k: Kit;
beforeAll(async () => {
  broker = await startTestBroker({ autoCreateTopicsEnable: false, groupMinSessionTimeoutMs: 1000, groupInitialRebalanceDelayMs: 300 });
  k = await kit(broker);
});
afterAll(async () => {
  await k?.close();
  await broker?.destroy();
});

const FORMAT = '%p:%o:%k\\n';
const groupArgs = (group: string, topic: string, reset: string) => [
  '-b',
  broker.bootstrap,
  '-G',
  group,
  topic,
  '-f',
  FORMAT,
  '-X',
  `auto.offset.reset=${reset}`,
  '-X',
  'session.timeout.ms=6000',
  '-X',
  'heartbeat.interval.ms=500',
  '-X',
  'enable.partition.eof=true',
];
const parse = (out: string) =>
  out
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const [p, o, key] = l.split(':');
      return { p: Number(p), o: Number(o), key: key! };
    });

/** kcat -G ... -e: reads until every assigned partition is at its end, commits, exits. */
async function readToEnd(group: string, topic: string, reset = 'earliest') {
  const r = await runOk(KCAT, [...groupArgs(group, topic, reset), '-e', '-q'], { timeoutMs: 30_000 });
  return parse(r.stdout.toString('utf8'));
}

describe('kcat -G consumer groups', () => {
  runGroupScenarios('kcat', {
    '2 independent groups': async () => {
      const topic = 'kcat-indep';
      await createTopic(k, topic, 3);
      await produceEach(k, topic, 3, 10);
      expect(await readToEnd(`${topic}-fast`, topic)).toHaveLength(30);
      // The other group commits 4 records of partition 0 only (as a standalone consumer would).
      await k.admin.setOffsets({ groupId: `${topic}-slow`, topic, partitions: [{ partition: 0, offset: '4' }] });
      await produceEach(k, topic, 3, 5, 'more');
      // The kcat group reads exactly the new records; then it is at 0 while the other one lags.
      const more = await readToEnd(`${topic}-fast`, topic);
      expect(more.map((m) => m.key).sort()).toEqual([0, 1, 2].flatMap((p) => [0, 1, 2, 3, 4].map((i) => `more-${p}-${i}`)).sort());
      await eventually(
        async () =>
          expect(entries(await wireLag(k, `${topic}-fast`, topic))).toEqual([
            [0, 0],
            [1, 0],
            [2, 0],
          ]),
        10_000,
      );
      expect(entries(await wireLag(k, `${topic}-slow`, topic))).toEqual([
        [0, 11],
        [1, 15],
        [2, 15],
      ]);
      expect(entries(await metricsLag(broker, `${topic}-fast`, topic))).toEqual([
        [0, 0],
        [1, 0],
        [2, 0],
      ]);
      expect(entries(await metricsLag(broker, `${topic}-slow`, topic))).toEqual([[0, 11]]);
    },
    '7 replay': async () => {
      const topic = 'kcat-replay';
      await createTopic(k, topic, 2);
      await produceEach(k, topic, 2, 10);
      const all = [0, 1].flatMap((p) => Array.from({ length: 10 }, (_, o) => `${p}:${o}`)).sort();
      // A new group with earliest reads everything; a second run of the same group nothing (it committed).
      expect((await readToEnd(`${topic}-earliest`, topic)).map((m) => `${m.p}:${m.o}`).sort()).toEqual(all);
      expect(await readToEnd(`${topic}-earliest`, topic)).toEqual([]);
      expect(entries(await committed(k, `${topic}-earliest`, topic))).toEqual([
        [0, 10],
        [1, 10],
      ]);
      // A new group with latest: once both partitions report their end (stderr), produce; it reads only those.
      const latest = new Proc(KCAT, [...groupArgs(`${topic}-latest`, topic, 'latest'), '-u'], 30_000); // -u: unbuffered stdout
      try {
        await eventually(() => expect(latest.stderr.match(/Reached end of topic/g)?.length ?? 0).toBeGreaterThanOrEqual(2), 20_000);
        await k.producer.send({ topic, acks: -1, messages: Array.from({ length: 6 }, (_, i) => ({ key: `late-${i}`, value: 'v' })) });
        const hw = await highWatermarks(k, topic);
        expect([...hw.values()].reduce((a, b) => a + b)).toBe(26);
        await eventually(
          () =>
            expect(
              latest
                .stdoutText()
                .split('\n')
                .filter((l) => l !== '').length,
            ).toBe(6),
          15_000,
        );
        await new Promise((r) => setTimeout(r, 1000));
        expect(
          parse(latest.stdoutText())
            .map((m) => m.key)
            .sort(),
        ).toEqual(Array.from({ length: 6 }, (_, i) => `late-${i}`));
      } finally {
        await latest.kill();
      }
    },
  });
});
