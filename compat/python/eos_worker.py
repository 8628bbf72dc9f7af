"""An exactly-once consume-transform-produce worker (confluent-kafka-python,
librdkafka) for compat/eos-transform.test.ts, which kills it (SIGKILL) at
random moments and restarts it.

Usage: eos_worker.py BOOTSTRAP IN_TOPIC OUT_TOPIC GROUP TRANSACTIONAL_ID SEED [IDLE_SECONDS]

A transactional producer (fixed transactional.id: init_transactions fences a
killed predecessor and aborts its open transaction) and a read_committed
consumer of GROUP with a static group.instance.id (a restarted worker takes
over the dead one's membership without waiting for its session to expire).
Loop: consume up to 10 records, begin_transaction, produce "out-" + value
with the same key to OUT_TOPIC, send_offsets_to_transaction(position of the
assignment), commit_transaction, with small random sleeps between the steps
so that kills land in every phase. Exits 0 once every assigned partition is
at its end and no record came for IDLE_SECONDS.

Prints one line per phase on stdout, flushed:
  PHASE <name> <monotonic ms since start> [detail]
names: start, init, assigned, begin, produced, offsets, committing,
committed, aborted, done.
"""
import os
import random
import sys
import time

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

bootstrap, in_topic, out_topic, group, txn_id, seed = sys.argv[1:7]
idle_seconds = float(sys.argv[7]) if len(sys.argv) > 7 else 3.0
rng = random.Random(int(seed))
t0 = time.monotonic()


def say(name, detail=''):
    sys.stdout.write('PHASE %s %d %s\n' % (name, (time.monotonic() - t0) * 1000, detail))
    sys.stdout.flush()


def nap(max_ms):
    time.sleep(rng.uniform(0, max_ms) / 1000.0)


say('start')
producer = Producer({
    'bootstrap.servers': bootstrap,
    'transactional.id': txn_id,
    'transaction.timeout.ms': 60000,
    'linger.ms': 5,
    'reconnect.backoff.ms': 50,
    'reconnect.backoff.max.ms': 500,
    **({'debug': os.environ['EOS_WORKER_DEBUG']} if os.environ.get('EOS_WORKER_DEBUG') else {}),
})
producer.init_transactions(30)
# Without this the first produce() waits for librdkafka's 1 s topic scan to
# learn eos-out's partitions, and every worker would die in its first commit.
producer.list_topics(out_topic, timeout=10)
say('init')

assignment = []
at_end = set()


def on_assign(consumer, partitions):
    global assignment
    assignment = list(partitions)
    at_end.clear()
    say('assigned', ','.join(str(p.partition) for p in partitions))


def on_revoke(consumer, partitions):
    global assignment
    assignment = []
    at_end.clear()
    say('revoked', ','.join(str(p.partition) for p in partitions))


consumer = Consumer({
    'bootstrap.servers': bootstrap,
    'group.id': group,
    'group.instance.id': txn_id + '-member',
    'isolation.level': 'read_committed',
    'enable.auto.commit': False,
    'enable.auto.offset.store': False,
    'auto.offset.reset': 'earliest',
    'enable.partition.eof': True,
    'session.timeout.ms': 6000,
    'heartbeat.interval.ms': 500,
    # One connection carries Fetch and ListOffsets in order: a long-polling
    # Fetch would hold back the offset lookup of a partition with no committed
    # offset for up to two fetch waits.
    'fetch.wait.max.ms': 50,
    'reconnect.backoff.ms': 50,
    'reconnect.backoff.max.ms': 500,
    **({'debug': os.environ['EOS_WORKER_DEBUG']} if os.environ.get('EOS_WORKER_DEBUG') else {}),
})
consumer.subscribe([in_topic], on_assign=on_assign, on_revoke=on_revoke)


def rewind():
    """After an aborted transaction: go back to the group's committed offsets."""
    committed = consumer.committed(assignment, timeout=10)
    for tp in committed:
        if tp.offset >= 0:
            consumer.seek(tp)
        else:
            consumer.seek(TopicPartition(tp.topic, tp.partition, -2))  # OFFSET_BEGINNING


transactions = 0
records = 0
last_input = time.monotonic()
while True:
    msgs = consumer.consume(num_messages=10, timeout=0.2)
    batch = []
    for m in msgs:
        if m.error():
            if m.error().code() == KafkaError._PARTITION_EOF:
                at_end.add(m.partition())
                continue
            raise KafkaException(m.error())
        at_end.discard(m.partition())
        batch.append(m)
    if not batch:
        ended = assignment and all(tp.partition in at_end for tp in assignment)
        if ended and time.monotonic() - last_input > idle_seconds:
            break
        continue
    last_input = time.monotonic()

    producer.begin_transaction()
    say('begin', '%d' % len(batch))
    try:
        for m in batch:
            producer.produce(out_topic, key=m.key(), value=b'out-' + m.value())
            producer.poll(0)
            nap(4)
        say('produced', ' '.join('%d:%d' % (m.partition(), m.offset()) for m in batch))
        nap(120)
        positions = [tp for tp in consumer.position(assignment) if tp.offset >= 0]
        producer.send_offsets_to_transaction(positions, consumer.consumer_group_metadata(), 30)
        say('offsets', ' '.join('%d:%d' % (tp.partition, tp.offset) for tp in positions))
        nap(120)
        say('committing')
        producer.commit_transaction(30)
    except KafkaException as e:
        err = e.args[0]
        if not err.txn_requires_abort():
            raise
        say('aborted', str(err))
        producer.abort_transaction(30)
        rewind()
        continue
    transactions += 1
    records += len(batch)
    say('committed', '%d %d' % (transactions, records))

say('done', '%d %d' % (transactions, records))
consumer.close()
producer.flush(10)
