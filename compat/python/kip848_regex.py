# Issue 17, scenario 3, with librdkafka (confluent-kafka from PyPI, group.protocol=consumer):
# a consumer subscribed to the pattern ^lr-rx-.* (librdkafka 2.12+ sends it to the broker as
# SubscribedTopicRegex) reads a record of lr-rx-orders; lr-rx-payments is then created and a record
# written to it. Prints JSON: what was read per topic and how long after its creation the new one came.
import sys, time, json
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic
import confluent_kafka
b = sys.argv[1]
out = {"librdkafka": confluent_kafka.libversion()[0]}
a = AdminClient({"bootstrap.servers": b})
for f in a.create_topics([NewTopic("lr-rx-orders", 1, 1)]).values(): f.result()
p = Producer({"bootstrap.servers": b}); p.produce("lr-rx-orders", b"first"); p.flush(10)
c = Consumer({"bootstrap.servers": b, "group.id": "lr-rx", "group.protocol": "consumer", "auto.offset.reset": "earliest"})
c.subscribe(["^lr-rx-.*"])
read = {}
deadline = time.time() + 60
while "lr-rx-orders" not in read and time.time() < deadline:
    m = c.poll(0.2)
    if m is not None and not m.error(): read[m.topic()] = m.value().decode()
    elif m is not None: out.setdefault("errors", []).append(str(m.error()))
for f in a.create_topics([NewTopic("lr-rx-payments", 1, 1)]).values(): f.result()
created = time.time()
p.produce("lr-rx-payments", b"later"); p.flush(10)
while "lr-rx-payments" not in read and time.time() < created + 60:
    m = c.poll(0.2)
    if m is not None and not m.error(): read[m.topic()] = m.value().decode()
    elif m is not None: out.setdefault("errors", []).append(str(m.error()))
out["read"] = read
out["laterAfterMs"] = int((time.time() - created) * 1000)
c.close()
print(json.dumps(out))
