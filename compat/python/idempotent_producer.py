"""An idempotent confluent-kafka (librdkafka) producer for compat/idempotence.test.ts.

Produces `count` records "0".."count-1" to one partition, one at a time with a
small pause so that the test can kill and restart the broker mid-run, and
prints a JSON summary of delivery reports when every record is delivered.
"""
import json
import sys
import time

from confluent_kafka import Producer

bootstrap, topic, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
delivered, errors = [], []


def report(err, msg):
    if err is not None:
        errors.append(str(err))
    else:
        delivered.append(msg.offset())


producer = Producer({
    'bootstrap.servers': bootstrap,
    'enable.idempotence': True,
    'acks': 'all',
    'linger.ms': 2,
    'message.timeout.ms': 60000,
    'reconnect.backoff.ms': 50,
    'reconnect.backoff.max.ms': 500,
})
for i in range(count):
    producer.produce(topic, value=str(i).encode(), partition=0, on_delivery=report)
    producer.poll(0)
    time.sleep(0.004)
remaining = producer.flush(60)
print(json.dumps({'delivered': len(delivered), 'errors': errors[:5], 'undelivered': remaining}))
