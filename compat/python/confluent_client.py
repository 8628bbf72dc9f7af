"""confluent-kafka-python 1.7.0 (librdkafka 2.0.2) driven by compat/confluent-kafka-python.test.ts.

Usage: confluent_client.py COMMAND < request.json > answer.json
Keys, values and header values travel as base64 (null stays null).
Commands: create, list, delete, produce, consume, offsets.
The Consumer needs a group.id value, but assign() never joins the group and
enable.auto.commit=false never commits: no group API is used.
"""
import base64
import json
import sys

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic


def b64(b):
    return None if b is None else base64.b64encode(b).decode()


def unb64(s):
    return None if s is None else base64.b64decode(s)


def create(req):
    a = AdminClient({"bootstrap.servers": req["bootstrap"]})
    fs = a.create_topics([NewTopic(t["name"], t["partitions"], 1) for t in req["topics"]], operation_timeout=10)
    errors = []
    for name, f in fs.items():
        try:
            f.result(15)
            errors.append([name, None])
        except Exception as e:  # KafkaException wrapping a KafkaError
            errors.append([name, str(e)])
    return {"errors": errors}


def list_(req):
    a = AdminClient({"bootstrap.servers": req["bootstrap"]})
    md = a.list_topics(timeout=10)
    return {
        "topics": sorted(md.topics.keys()),
        "brokers": [[b.id, b.host, b.port] for b in md.brokers.values()],
        "controller": md.controller_id,
        "partitions": {t: sorted([p.id, p.leader, list(p.replicas), list(p.isrs)] for p in md.topics[t].partitions.values())
                       for t in req.get("describe", [])},
    }


def delete(req):
    a = AdminClient({"bootstrap.servers": req["bootstrap"]})
    fs = a.delete_topics(req["topics"], operation_timeout=10)
    errors = []
    for name, f in fs.items():
        try:
            f.result(15)
            errors.append([name, None])
        except Exception as e:
            errors.append([name, str(e)])
    return {"errors": errors}


def produce(req):
    p = Producer({"bootstrap.servers": req["bootstrap"], "acks": "all", "compression.type": req.get("codec") or "none",
                  "linger.ms": 50, "client.id": "compat-confluent-python"})
    delivered = []

    def report(err, msg):
        delivered.append({"error": None if err is None else str(err), "partition": msg.partition(), "offset": msg.offset(),
                          "key": b64(msg.key())})

    for r in req["records"]:
        p.produce(req["topic"], key=unb64(r["key"]), value=unb64(r["value"]), partition=r["partition"],
                  headers=[(k, unb64(v)) for k, v in r["headers"]], on_delivery=report)
    left = p.flush(20)
    return {"delivered": delivered, "undelivered": left}


def consume(req):
    c = Consumer({"bootstrap.servers": req["bootstrap"], "group.id": "compat-unused", "enable.auto.commit": False,
                  "enable.partition.eof": True, "client.id": "compat-confluent-python"})
    offset = req.get("offset")
    c.assign([TopicPartition(req["topic"], p, 0 if offset is None else offset) for p in req["partitions"]])
    out, errors, eof = [], [], set()
    deadline = 0
    while len(eof) < len(req["partitions"]) and deadline < 40:
        m = c.poll(0.5)
        if m is None:
            deadline += 1
            continue
        if m.error():
            if m.error().code() == KafkaError._PARTITION_EOF:
                eof.add(m.partition())
            else:
                errors.append(str(m.error()))
            continue
        out.append({"partition": m.partition(), "offset": m.offset(), "key": b64(m.key()), "value": b64(m.value()),
                    "headers": [[k, b64(v)] for k, v in (m.headers() or [])]})
    c.close()
    return {"records": out, "errors": errors, "eof": sorted(eof)}


def offsets(req):
    c = Consumer({"bootstrap.servers": req["bootstrap"], "group.id": "compat-unused", "enable.auto.commit": False})
    marks = [list(c.get_watermark_offsets(TopicPartition(req["topic"], p), timeout=10)) for p in req["partitions"]]
    by_ts = {}
    for ts in req.get("timestamps", []):
        res = c.offsets_for_times([TopicPartition(req["topic"], p, ts) for p in req["partitions"]], timeout=10)
        by_ts[str(ts)] = [tp.offset for tp in res]
    c.close()
    return {"watermarks": marks, "by_timestamp": by_ts}


COMMANDS = {"create": create, "list": list_, "delete": delete, "produce": produce, "consume": consume, "offsets": offsets}

if __name__ == "__main__":
    request = json.load(sys.stdin)
    json.dump(COMMANDS[sys.argv[1]](request), sys.stdout)
