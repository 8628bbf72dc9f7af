"""kafka-python 2.0.2 driven by compat/kafka-python.test.ts.

Usage: kafka_python_client.py COMMAND < request.json > answer.json
Keys, values and header values travel as base64 (null stays null).
Commands: create, list, delete, produce, consume, offsets.
Reads use KafkaConsumer without group_id: assign() + seek, no group APIs.
"""
import base64
import json
import logging
import sys

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic


def b64(b):
    return None if b is None else base64.b64encode(b).decode()


def unb64(s):
    return None if s is None else base64.b64decode(s)


def admin(req):
    return KafkaAdminClient(bootstrap_servers=req["bootstrap"], request_timeout_ms=10000, client_id="compat-kafka-python")


def create(req):
    a = admin(req)
    res = a.create_topics([NewTopic(t["name"], t["partitions"], 1, topic_configs=t.get("configs") or {}) for t in req["topics"]], timeout_ms=10000)
    a.close()
    return {"errors": [[name, code] for name, code, *_ in res.topic_errors]}


def list_(req):
    a = admin(req)
    topics = a.list_topics()
    a.close()
    c = KafkaConsumer(bootstrap_servers=req["bootstrap"], enable_auto_commit=False)
    parts = {t: sorted(c.partitions_for_topic(t) or []) for t in req.get("describe", [])}
    c.close()
    return {"topics": sorted(topics), "partitions": parts}


def delete(req):
    a = admin(req)
    res = a.delete_topics(req["topics"], timeout_ms=10000)
    a.close()
    return {"errors": [[name, code] for name, code in res.topic_error_codes]}


def old_api(req):
    # api_version [0, 9] or [0, 10]: the client's Kafka 0.9 / 0.10 requests, magic 0 / 1 message sets.
    return {"api_version": tuple(req["api_version"])} if req.get("api_version") else {}


def produce(req):
    codec = req.get("codec")
    p = KafkaProducer(bootstrap_servers=req["bootstrap"], acks="all", compression_type=None if codec in (None, "none") else codec,
                      linger_ms=50, client_id="compat-kafka-python", **old_api(req))
    futures = [p.send(req["topic"], key=unb64(r["key"]), value=unb64(r["value"]), partition=r["partition"],
                      headers=[(k, unb64(v)) for k, v in r["headers"]]) for r in req["records"]]
    p.flush(timeout=20)
    out = []
    for f in futures:
        md = f.get(timeout=20)
        out.append({"partition": md.partition, "offset": md.offset})
    p.close(timeout=5)
    return {"delivered": out}


class Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        if record.getMessage() not in self.messages:
            self.messages.append(record.getMessage())


def consume(req):
    warnings = Collect()
    logging.getLogger("kafka").addHandler(warnings)
    c = KafkaConsumer(bootstrap_servers=req["bootstrap"], enable_auto_commit=False, consumer_timeout_ms=req.get("idle_ms", 2000),
                      client_id="compat-kafka-python", **old_api(req))
    tps = [TopicPartition(req["topic"], p) for p in req["partitions"]]
    c.assign(tps)
    ends = c.end_offsets(tps)
    start = req.get("offset")
    for tp in tps:
        if start is None:
            c.seek_to_beginning(tp)
        else:
            c.seek(tp, start)
    out, error = [], None
    want = {tp: ends[tp] for tp in tps}
    try:
        while any(c.position(tp) < want[tp] for tp in tps):
            batch = c.poll(timeout_ms=2000)
            if not batch:
                break
            for tp, msgs in batch.items():
                for m in msgs:
                    out.append({"partition": m.partition, "offset": m.offset, "key": b64(m.key), "value": b64(m.value),
                                "headers": [[k, b64(v)] for k, v in m.headers]})
    except Exception as e:  # reported, not raised: some scenarios expect a refusal
        error = type(e).__name__ + ": " + str(e)
    c.close()
    return {"records": out, "error": error, "warnings": warnings.messages, "api_version": list(c.config["api_version"])}


def offsets(req):
    c = KafkaConsumer(bootstrap_servers=req["bootstrap"], enable_auto_commit=False)
    tps = [TopicPartition(req["topic"], p) for p in req["partitions"]]
    begin = c.beginning_offsets(tps)
    end = c.end_offsets(tps)
    c.close()
    return {"earliest": [begin[tp] for tp in tps], "latest": [end[tp] for tp in tps]}


COMMANDS = {"create": create, "list": list_, "delete": delete, "produce": produce, "consume": consume, "offsets": offsets}

if __name__ == "__main__":
    request = json.load(sys.stdin)
    json.dump(COMMANDS[sys.argv[1]](request), sys.stdout)
