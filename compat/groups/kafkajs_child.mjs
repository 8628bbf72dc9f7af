// One kafkajs 2.2.4 group member in its own process, so a test can SIGKILL it
// mid-batch. Same request and JSON-line events as groups_driver.py consume:
// assign (from the GROUP_JOIN instrumentation event),
// ready (first fetch after a join: positions resolved), msg, commit, stall,
// seeked, done. "stop" on stdin disconnects cleanly.
import { createInterface } from 'node:readline';
import kafkajs from 'kafkajs';

const { Kafka, logLevel } = kafkajs;
const req = JSON.parse(process.argv[2]);
const emit = (ev) => process.stdout.write(`${JSON.stringify(ev)}\n`);

const kafka = new Kafka({ clientId: req.name ?? 'kjs-member', brokers: [req.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 5, initialRetryTime: 100 } });
const consumer = kafka.consumer({
  groupId: req.group,
  sessionTimeout: req.session_ms ?? 6000,
  heartbeatInterval: req.heartbeat_ms ?? 500,
  rebalanceTimeout: req.max_poll_ms ?? 30000,
  maxWaitTimeInMs: 200,
  retry: { retries: 5, initialRetryTime: 100 },
});
let producer;
let stopping = false;
let waitingReady = false;
let processed = 0;
let seeked = false;
let owned = [];
const pending = new Map();

async function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  await consumer.disconnect().catch(() => {});
  await producer?.disconnect().catch(() => {});
  emit({ ev: 'done', processed });
  process.exit(code);
}

createInterface({ input: process.stdin }).on('line', (l) => {
  if (l.trim() === 'stop') void stop();
});
setTimeout(() => void stop(), (req.max_s ?? 25) * 1000);

consumer.on(consumer.events.GROUP_JOIN, (e) => {
  const parts = (e.payload.memberAssignment[req.topic] ?? []).slice().sort((a, b) => a - b);
  emit({ ev: 'assign', partitions: parts, owned: parts, memberId: e.payload.memberId, leader: e.payload.isLeader });
  owned = parts;
  waitingReady = parts.length > 0;
});
consumer.on(consumer.events.FETCH, async () => {
  if (!waitingReady) return;
  waitingReady = false;
  emit({ ev: 'ready' });
  if (req.produce_when_ready) {
    const recs = req.produce_when_ready;
    req.produce_when_ready = null;
    producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: req.topic, acks: -1, messages: recs.map(([key, value]) => ({ key, value })) });
    emit({ ev: 'produced', n: recs.length });
  }
});
consumer.on(consumer.events.CRASH, (e) => emit({ ev: 'error', error: String(e.payload.error) }));

await consumer.connect();
await consumer.subscribe({ topics: [req.topic], fromBeginning: (req.reset ?? 'earliest') === 'earliest' });
await consumer.run({
  autoCommit: false,
  partitionsConsumedConcurrently: 1,
  eachMessage: async ({ partition, message }) => {
    if (stopping) return;
    const o = Number(message.offset);
    if (req.process_ms) await new Promise((r) => setTimeout(r, req.process_ms));
    processed += 1;
    emit({ ev: 'msg', p: partition, o, k: message.key === null ? null : message.key.toString() });
    pending.set(partition, o + 1);
    if (req.commit_every && processed % req.commit_every === 0) {
      const offsets = [...pending].sort((a, b) => a[0] - b[0]);
      pending.clear();
      try {
        await consumer.commitOffsets(offsets.map(([p, next]) => ({ topic: req.topic, partition: p, offset: String(next) })));
        emit({ ev: 'commit', offsets });
      } catch (e) {
        // Refused (ILLEGAL_GENERATION once an online downgrade left this member's generation behind): reported, and the
        // member goes on as an application does; its next heartbeat makes it rejoin, and the next owner resumes from the last commit.
        emit({ ev: 'commit_failed', offsets, error: String(e) });
      }
    }
    if (req.stall_after !== undefined && processed === req.stall_after) {
      // kafkajs has no max.poll.interval.ms: blocking here stops its heartbeats (sent between
      // messages and batches), so the session timeout is what removes this member.
      emit({ ev: 'stall' });
      await new Promise((r) => setTimeout(r, (req.stall_s ?? 20) * 1000));
      emit({ ev: 'done', processed });
      process.exit(0);
    }
    if (req.seek_zero_after !== undefined && !seeked && processed >= req.seek_zero_after) {
      seeked = true;
      for (const p of owned) consumer.seek({ topic: req.topic, partition: p, offset: '0' });
      emit({ ev: 'seeked', partitions: owned });
    }
  },
});
