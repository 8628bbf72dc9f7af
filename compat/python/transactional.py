"""A confluent-kafka (librdkafka) transactional producer and read_committed
consumer for compat/transactions.test.ts.

Usage: transactional.py BOOTSTRAP TOPIC TRANSACTIONAL_ID GROUP
One partition. Commits "c0".."c9", aborts "a0".."a4", then commits "o0".."o4"
together with an offset for GROUP (send_offsets_to_transaction); then a
second producer with the same transactional.id fences the first. A
read_committed consumer and a read_uncommitted one read the partition back.
Prints a JSON summary.
"""
import json
import sys

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

bootstrap, topic, txn_id, group = sys.argv[1:5]
out = {}


def producer():
    return Producer({
        'bootstrap.servers': bootstrap,
        'transactional.id': txn_id,
        'transaction.timeout.ms': 60000,
        'linger.ms': 5,
    })


def consumer(isolation):
    return Consumer({
        'bootstrap.servers': bootstrap,
        'group.id': group,
        'enable.auto.commit': False,
        'isolation.level': isolation,
        'enable.partition.eof': True,
        'auto.offset.reset': 'earliest',
    })


def read_all(isolation):
    c = consumer(isolation)
    c.assign([TopicPartition(topic, 0, 0)])
    values = []
    while True:
        m = c.poll(10)
        if m is None:
            values.append('<timeout>')
            break
        if m.error():
            if m.error().code() == KafkaError._PARTITION_EOF:
                break
            values.append('<error %s>' % m.error())
            break
        values.append(m.value().decode())
    c.close()
    return values


p = producer()
p.init_transactions(30)
p.begin_transaction()
for i in range(10):
    p.produce(topic, value=('c%d' % i).encode(), partition=0)
p.commit_transaction(30)

p.begin_transaction()
for i in range(5):
    p.produce(topic, value=('a%d' % i).encode(), partition=0)
p.flush(30)
p.abort_transaction(30)

group_consumer = consumer('read_committed')
p.begin_transaction()
for i in range(5):
    p.produce(topic, value=('o%d' % i).encode(), partition=0)
p.send_offsets_to_transaction([TopicPartition(topic, 0, 7)], group_consumer.consumer_group_metadata(), 30)
p.commit_transaction(30)

committed = group_consumer.committed([TopicPartition(topic, 0)], timeout=10)
out['group_offset'] = committed[0].offset
group_consumer.close()

# Fencing: a second instance with the same transactional.id.
p.begin_transaction()
p.produce(topic, value=b'zombie', partition=0)
p.flush(30)
p2 = producer()
p2.init_transactions(30)
try:
    p.commit_transaction(30)
    out['zombie_commit'] = 'committed'
except KafkaException as e:
    err = e.args[0]
    out['zombie_commit'] = {'fatal': err.fatal(), 'code': err.name()}
p2.begin_transaction()
p2.produce(topic, value=b'fresh', partition=0)
p2.commit_transaction(30)

out['read_committed'] = read_all('read_committed')
out['read_uncommitted'] = read_all('read_uncommitted')
print(json.dumps(out))
