"""confluent-kafka 2.x from PyPI (its wheel bundles librdkafka 2.1x), driven by compat/pypi-confluent-kafka.test.ts.

Usage: <venv python> pypi_confluent.py COMMAND < request.json > answer.json
Reuses confluent_client.py (create, list, delete, produce, consume, offsets: the
same API as 1.7) and adds:
  batch   {"steps": [[command, request], ...]}: several commands in one process
  group   two members of one group: subscribe, consume, commit; a second member joins and the partitions are split
  kip848  a member with group.protocol=consumer (KIP-848): what the client reports
  admin   configs, partitions, groups and offsets through AdminClient
  secure  SASL over TLS (SASL_SSL, the test CA trusted): produce and read back, or the error a wrong password gets
"""
import json
import logging
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import confluent_client as cc  # noqa: E402
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource,  # noqa: E402
                                   NewPartitions, OffsetSpec, ResourceType)


def member(req, name, extra=None):
    conf = {"bootstrap.servers": req["bootstrap"], "group.id": req["group"], "client.id": name,
            "enable.auto.commit": False, "auto.offset.reset": "earliest", "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 500, "topic.metadata.refresh.interval.ms": 2000}
    conf.update(extra or {})
    c = Consumer(conf)
    state = {"assigned": []}

    def on_assign(_c, parts):
        state["assigned"] = sorted(p.partition for p in parts)

    def on_revoke(_c, parts):
        state["assigned"] = []

    c.subscribe([req["topic"]], on_assign=on_assign, on_revoke=on_revoke)
    return c, state


def record(m):
    return {"partition": m.partition(), "offset": m.offset(), "key": cc.b64(m.key()), "value": cc.b64(m.value()),
            "headers": [[k, cc.b64(v)] for k, v in (m.headers() or [])]}


def group(req):
    """A joins alone and reads the `first` records already there, committing each; B joins; `records` are produced and both read them."""
    out = {"errors": []}
    a, sa = member(req, "member-a")
    got_a, deadline = [], time.time() + 20
    while len(got_a) < req["first"] and time.time() < deadline:
        m = a.poll(0.2)
        if m is None:
            continue
        if m.error():
            out["errors"].append(str(m.error()))
            continue
        got_a.append(record(m))
        a.commit(message=m, asynchronous=False)
    out["a_alone"] = {"assigned": sa["assigned"], "records": got_a}
    out["committed_before_b"] = [tp.offset for tp in a.committed([TopicPartition(req["topic"], p) for p in range(req["partitions"])], timeout=10)]
    b, sb = member(req, "member-b")
    deadline = time.time() + 25
    # Both must poll: A rejoins from its poll loop, B joins from its own.
    while time.time() < deadline:
        for c in (a, b):
            m = c.poll(0.1)
            if m is not None and not m.error():
                out["errors"].append("record before the rebalance settled: %r" % (record(m),))
        if sa["assigned"] and sb["assigned"] and sorted(sa["assigned"] + sb["assigned"]) == list(range(req["partitions"])):
            break
    out["after_join"] = {"a": sa["assigned"], "b": sb["assigned"]}
    # The second half is produced only now, so that each record goes to the member that owns its partition.
    out["produced"] = cc.produce({"bootstrap": req["bootstrap"], "topic": req["topic"], "codec": "none", "records": req["records"]})["undelivered"]
    got = {"a": [], "b": []}
    deadline = time.time() + 20
    while len(got["a"]) + len(got["b"]) < len(req["records"]) and time.time() < deadline:
        for name, c in (("a", a), ("b", b)):
            m = c.poll(0.1)
            if m is None:
                continue
            if m.error():
                out["errors"].append(str(m.error()))
                continue
            got[name].append(record(m))
            c.commit(message=m, asynchronous=False)
    out["after"] = got
    out["committed"] = [tp.offset for tp in b.committed([TopicPartition(req["topic"], p) for p in range(req["partitions"])], timeout=10)]
    a.close()
    b.close()
    return out


def kip848(req):
    """KIP-848's consumer protocol (ConsumerGroupHeartbeat, key 68): what the member reads and is assigned."""
    errors, logs = [], []

    class Logs(logging.Handler):
        def emit(self, rec):
            # librdkafka says why it does not join only in its cgrp debug log.
            msg = rec.getMessage()
            if (rec.levelno >= logging.WARNING or "not supported by broker" in msg) and msg not in logs:
                logs.append(msg)

    log = logging.getLogger("kip848")
    log.addHandler(Logs())
    log.propagate = False
    log.setLevel(logging.DEBUG)
    c = Consumer({"bootstrap.servers": req["bootstrap"], "group.id": req["group"], "group.protocol": "consumer",
                  "auto.offset.reset": "earliest", "logger": log, "debug": "cgrp",
                  "error_cb": lambda e: errors.append({"code": e.name(), "str": e.str(), "fatal": e.fatal()})})
    c.subscribe([req["topic"]])
    records, deadline = 0, time.time() + req.get("seconds", 4)
    while time.time() < deadline:
        m = c.poll(0.2)
        if m is None:
            continue
        if m.error():
            e = m.error()
            errors.append({"code": e.name(), "str": e.str(), "fatal": e.fatal()})
            if e.fatal():
                break
        else:
            records += 1
    assigned = [tp.partition for tp in c.assignment()]
    try:
        c.close()
    except Exception as e:  # noqa: BLE001 - reported
        errors.append({"code": "close", "str": str(e), "fatal": False})
    return {"records": records, "assigned": assigned, "errors": errors, "logs": logs}


def done(futures):
    out = {}
    for k, f in futures.items():
        try:
            out[str(k)] = [None, f.result(15)]
        except Exception as e:  # noqa: BLE001 - a KafkaException: reported
            out[str(k)] = [str(e), None]
    return out


def admin(req):
    """Configs, partitions, groups and offsets through AdminClient; every answer reported, nothing raised."""
    a = AdminClient({"bootstrap.servers": req["bootstrap"]})
    topic, grp = req["topic"], req["group"]
    res = {}
    topic_res = ConfigResource(ResourceType.TOPIC, topic)
    desc = done(a.describe_configs([topic_res]))
    err, entries = next(iter(desc.values()))
    res["describe"] = [err, {k: [v.value, v.source, v.is_default] for k, v in (entries or {}).items() if k in ("retention.ms", "cleanup.policy", "compression.type")}]
    inc = ConfigResource(ResourceType.TOPIC, topic, incremental_configs=[
        ConfigEntry("retention.ms", "3600000", incremental_operation=AlterConfigOpType.SET),
        ConfigEntry("cleanup.policy", "compact", incremental_operation=AlterConfigOpType.SET)])
    res["incremental_alter"] = [v[0] for v in done(a.incremental_alter_configs([inc])).values()]
    err, entries = next(iter(done(a.describe_configs([topic_res])).values()))
    res["after_alter"] = {k: [v.value, v.source] for k, v in (entries or {}).items() if k in ("retention.ms", "cleanup.policy")}
    bad = ConfigResource(ResourceType.TOPIC, topic, incremental_configs=[
        ConfigEntry("no.such.config", "1", incremental_operation=AlterConfigOpType.SET)])
    res["bad_config"] = [v[0] for v in done(a.incremental_alter_configs([bad])).values()]
    res["create_partitions"] = [v[0] for v in done(a.create_partitions([NewPartitions(topic, 5)])).values()]
    res["fewer_partitions"] = [v[0] for v in done(a.create_partitions([NewPartitions(topic, 2)])).values()]
    md = a.list_topics(topic, timeout=10)
    res["partitions"] = sorted(md.topics[topic].partitions.keys())
    # Admin list_offsets (ListOffsets through AdminClient, KIP-396).
    offs = a.list_offsets({TopicPartition(topic, p): spec for p, spec in ((0, OffsetSpec.earliest()), (1, OffsetSpec.latest()), (2, OffsetSpec.max_timestamp()))})
    res["list_offsets"] = {}
    for tp, f in offs.items():
        try:
            r = f.result(15)
            res["list_offsets"][str(tp.partition)] = r.offset
        except Exception as e:  # noqa: BLE001
            res["list_offsets"][str(tp.partition)] = str(e)
    # A group with committed offsets, made by a consumer that commits without joining.
    c = Consumer({"bootstrap.servers": req["bootstrap"], "group.id": grp, "enable.auto.commit": False})
    c.commit(offsets=[TopicPartition(topic, 0, 3), TopicPartition(topic, 1, 1)], asynchronous=False)
    c.close()
    listed = a.list_consumer_groups().result(15)
    res["list_groups"] = sorted(g.group_id for g in listed.valid)
    described = done(a.describe_consumer_groups([grp]))
    err, g = described[grp]
    res["describe_group"] = [err, None if g is None else {"state": str(g.state), "members": len(g.members), "simple": g.is_simple_consumer_group, "type": str(g.type)}]
    from confluent_kafka import ConsumerGroupTopicPartitions
    lo = a.list_consumer_group_offsets([ConsumerGroupTopicPartitions(grp)])
    r = lo[grp].result(15)
    res["group_offsets"] = sorted([tp.partition, tp.offset] for tp in r.topic_partitions if tp.offset >= 0)
    res["delete_group"] = [v[0] for v in done(a.delete_consumer_groups([grp])).values()]
    listed = a.list_consumer_groups().result(15)
    res["groups_after_delete"] = sorted(g.group_id for g in listed.valid)
    return res


def secure(req):
    """Produces `values` to partition 0 of `topic` and reads them back, over SASL_SSL with `mechanism`; errors reported."""
    errors = []
    conf = {"bootstrap.servers": req["bootstrap"], "security.protocol": "SASL_SSL", "ssl.ca.location": req["ca"],
            "sasl.mechanisms": req["mechanism"], "sasl.username": req["username"], "sasl.password": req["password"],
            # librdkafka reports a refused login to error_cb (a KafkaError, code _AUTHENTICATION) and keeps retrying.
            "error_cb": lambda e: errors.append(e.name())}
    p = Producer({**conf, "acks": "all", "message.timeout.ms": 5000})
    delivered = []
    for v in req["values"]:
        p.produce(req["topic"], value=v.encode(), partition=0,
                  on_delivery=lambda err, m: delivered.append(None if err is None else err.name()))
    p.flush(10)
    out = {"delivered": delivered, "values": [], "errors": errors}
    if errors:
        return out
    c = Consumer({**conf, "group.id": "compat-unused", "enable.auto.commit": False, "enable.partition.eof": True})
    c.assign([TopicPartition(req["topic"], 0, 0)])
    deadline = time.time() + 10
    while time.time() < deadline:
        m = c.poll(0.5)
        if m is None:
            continue
        if m.error():
            if m.error().code() == KafkaError._PARTITION_EOF:
                break
            errors.append(m.error().name())
            continue
        out["values"].append(m.value().decode())
    c.close()
    return out


def batch(req):
    return [COMMANDS[cmd]({"bootstrap": req["bootstrap"], **r}) for cmd, r in req["steps"]]


COMMANDS = {**cc.COMMANDS, "group": group, "kip848": kip848, "admin": admin, "secure": secure, "batch": batch}

if __name__ == "__main__":
    request = json.load(sys.stdin)
    json.dump(COMMANDS[sys.argv[1]](request), sys.stdout)
