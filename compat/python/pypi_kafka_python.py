"""kafka-python 3.x from PyPI driven by compat/pypi-kafka-python.test.ts.

Usage: <venv python> pypi_kafka_python.py COMMAND < request.json > answer.json
Keys, values and header values travel as base64 (null stays null).
Reuses kafka_python_client.py (the 2.0.2 runner) for produce, consume, list and
offsets: KafkaProducer/KafkaConsumer kept their API. KafkaAdminClient's changed
in 3.0 (answers are dicts), so create, delete and admin are written here. Adds:
  offsets  earliest/latest and offsets_for_times
  group    two members of one group: subscribe, consume, commit; a second member joins
  admin    configs, partitions, groups and their offsets
  txn      transactions (commit, abort, send_offsets_to_transaction) read back read_committed and read_uncommitted
  secure   SASL over TLS (SASL_SSL, the test CA trusted): produce and read back, or the error a wrong password gets
  batch    {"steps": [[command, request], ...]}: several commands in one process
"""
import json
import logging
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kafka_python_client as kp  # noqa: E402
from kafka import KafkaConsumer, KafkaProducer, TopicPartition  # noqa: E402
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient  # noqa: E402
from kafka.structs import OffsetAndMetadata  # noqa: E402


def admin_client(req):
    return KafkaAdminClient(bootstrap_servers=req["bootstrap"], request_timeout_ms=10000, client_id="compat-kafka-python-3")


def create(req):
    a = admin_client(req)
    res = a.create_topics({t["name"]: {"num_partitions": t["partitions"], "replication_factor": 1, "configs": t.get("configs") or {}}
                           for t in req["topics"]}, raise_errors=False)
    a.close()
    return {"errors": [[t["name"], t["error_code"]] for t in res["topics"]]}


def delete(req):
    a = admin_client(req)
    res = a.delete_topics(req["topics"], raise_errors=False)
    a.close()
    return {"errors": [[t["name"], t["error_code"]] for t in res["topics"]]}


def offsets(req):
    res = kp.offsets(req)
    c = KafkaConsumer(bootstrap_servers=req["bootstrap"], enable_auto_commit=False)
    tps = [TopicPartition(req["topic"], p) for p in req["partitions"]]
    res["by_timestamp"] = {}
    for ts in req.get("timestamps", []):
        found = c.offsets_for_times({tp: ts for tp in tps})
        res["by_timestamp"][str(ts)] = [None if found[tp] is None else found[tp].offset for tp in tps]
    c.close()
    return res


def record(m):
    return {"partition": m.partition, "offset": m.offset, "key": kp.b64(m.key), "value": kp.b64(m.value),
            "headers": [[k, kp.b64(v)] for k, v in m.headers]}


def member(req, name):
    c = KafkaConsumer(bootstrap_servers=req["bootstrap"], group_id=req["group"], client_id=name, enable_auto_commit=False,
                      auto_offset_reset="earliest", session_timeout_ms=6000, heartbeat_interval_ms=500,
                      metadata_max_age_ms=2000)
    c.subscribe([req["topic"]])
    return c


def poll_into(c, got, errors):
    for tp, msgs in c.poll(timeout_ms=100).items():
        for m in msgs:
            got.append(record(m))
        if msgs:
            c.commit({tp: OffsetAndMetadata(msgs[-1].offset + 1, "", -1)})


def poll_together(members, done, seconds, errors):
    """Each (consumer, records) polls in a thread of its own until done() holds or the time is up.

    kafka-python 3.0.12 drops a rebalance that completes while its consumer is not inside poll():
    join_group_async() leaves the join task in flight when poll's timer expires, and the next poll()
    sees the finished task and sends a new JoinGroup instead of taking its assignment (see
    compat/FINDINGS.md). Two members polled in turn from one thread hit that window again and again
    (a rebalance storm); a thread per member, always inside poll(), is how applications run them.
    """
    stop = threading.Event()
    deadline = time.time() + seconds

    def loop(c, got):
        while not stop.is_set() and time.time() < deadline:
            poll_into(c, got, errors)

    threads = [threading.Thread(target=loop, args=m, daemon=True) for m in members]
    for t in threads:
        t.start()
    while time.time() < deadline and not done():
        time.sleep(0.05)
    stop.set()
    for t in threads:
        t.join()


def group(req):
    """A joins alone and reads the `first` records already there, committing; B joins; `records` are produced and both read them."""
    out = {"errors": []}
    tps = [TopicPartition(req["topic"], p) for p in range(req["partitions"])]
    a = member(req, "member-a")
    got_a, deadline = [], time.time() + 20
    while len(got_a) < req["first"] and time.time() < deadline:
        poll_into(a, got_a, out["errors"])
    out["a_alone"] = {"assigned": sorted(tp.partition for tp in a.assignment()), "records": got_a}
    out["committed_before_b"] = [a.committed(tp) for tp in tps]
    b = member(req, "member-b")
    early = []

    # Both must poll: A rejoins from its poll loop, B joins from its own.
    def split():
        sa, sb = [tp.partition for tp in a.assignment()], [tp.partition for tp in b.assignment()]
        return bool(sa and sb and sorted(sa + sb) == list(range(req["partitions"])))

    poll_together([(a, early), (b, early)], split, 20, out["errors"])
    out["early"] = early
    out["after_join"] = {"a": sorted(tp.partition for tp in a.assignment()), "b": sorted(tp.partition for tp in b.assignment())}
    out["produced"] = kp.produce({"bootstrap": req["bootstrap"], "topic": req["topic"], "codec": "none", "records": req["records"]})["delivered"]
    got = {"a": [], "b": []}
    poll_together([(a, got["a"]), (b, got["b"])], lambda: len(got["a"]) + len(got["b"]) >= len(req["records"]), 15, out["errors"])
    out["after"] = got
    out["committed"] = [b.committed(tp) for tp in tps]
    a.close()
    b.close()
    return out


def attempt(f):
    try:
        return [None, f()]
    except Exception as e:  # noqa: BLE001 - reported, not raised
        return [type(e).__name__, None]


def admin(req):
    a = admin_client(req)
    topic, grp = req["topic"], req["group"]
    res = {}
    keys = ["retention.ms", "cleanup.policy", "compression.type"]

    def describe():
        d = a.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic, keys)], config_filter="all")
        cfg = d["topic"][topic]
        return {k: [cfg[k]["value"], cfg[k]["config_source"]] for k in keys if k in cfg}

    res["describe"] = attempt(describe)
    res["alter"] = attempt(lambda: str(a.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic, {"retention.ms": "3600000", "cleanup.policy": "compact"})])))
    res["after_alter"] = attempt(describe)
    res["create_partitions"] = attempt(lambda: a.create_partitions({topic: 5}, raise_errors=False).to_dict()["results"])
    res["fewer_partitions"] = attempt(lambda: a.create_partitions({topic: 2}, raise_errors=False).to_dict()["results"])
    c = KafkaConsumer(bootstrap_servers=req["bootstrap"], enable_auto_commit=False, group_id=grp)
    res["partitions"] = sorted(c.partitions_for_topic(topic) or [])
    # Offsets committed without joining (a simple consumer group).
    c.commit({TopicPartition(topic, 0): OffsetAndMetadata(3, "", -1), TopicPartition(topic, 1): OffsetAndMetadata(1, "", -1)})
    c.close()
    res["list_groups"] = attempt(lambda: sorted(g["group_id"] for g in a.list_groups()))
    res["describe_group"] = attempt(lambda: {k: v for k, v in a.describe_groups([grp])[grp].items() if k in ("group_state", "protocol_type", "members", "error")})
    res["group_offsets"] = attempt(lambda: sorted([tp.partition, om.offset] for tp, om in a.list_group_offsets({grp: None})[grp].items()))
    res["delete_group"] = attempt(lambda: [[g, str(e)] for g, e in a.delete_groups([grp]).items()])
    res["groups_after_delete"] = attempt(lambda: sorted(g["group_id"] for g in a.list_groups()))
    a.close()
    return res


def txn(req):
    """Commit c0..c4, abort a0..a2, then commit o0..o1 with an offset for `group`; read back both ways."""
    topic, tp = req["topic"], TopicPartition(req["topic"], 0)
    p = KafkaProducer(bootstrap_servers=req["bootstrap"], transactional_id=req["txn_id"], linger_ms=5,
                      client_id="compat-kafka-python-3")
    p.init_transactions()
    for values, end in ((["c%d" % i for i in range(5)], p.commit_transaction), (["a%d" % i for i in range(3)], p.abort_transaction),
                        (["o%d" % i for i in range(2)], p.commit_transaction)):
        p.begin_transaction()
        for v in values:
            p.send(topic, v.encode(), partition=0).get(timeout=10)
        if values[0] == "o0":
            # A bare group id: the pre-KIP-447 form (no consumer generation to fence with).
            p.send_offsets_to_transaction({tp: OffsetAndMetadata(4, "", -1)}, req["group"])
        end()
    p.close(timeout=5)
    a = admin_client(req)
    out = {"group_offset": a.list_group_offsets({req["group"]: None})[req["group"]][tp].offset}
    a.close()
    for isolation in ("read_committed", "read_uncommitted"):
        c = KafkaConsumer(bootstrap_servers=req["bootstrap"], enable_auto_commit=False, isolation_level=isolation,
                          consumer_timeout_ms=3000)
        c.assign([tp])
        end = c.end_offsets([tp])[tp]
        c.seek_to_beginning(tp)
        values = []
        deadline = time.time() + 15
        while c.position(tp) < end and time.time() < deadline:
            for _tp, msgs in c.poll(timeout_ms=500).items():
                values.extend(m.value.decode() for m in msgs)
        out[isolation] = {"values": values, "end": end, "position": c.position(tp)}
        c.close()
    return out


def secure(req):
    """Produces `values` to partition 0 of `topic` and reads them back, over SASL_SSL with `mechanism`; the error's class reported.

    A refused login is not raised as such: the client logs the SaslAuthenticationFailedError and keeps retrying the
    bootstrap until bootstrap_timeout_ms, then raises KafkaTimeoutError. Both are reported.
    """
    logged = kp.Collect()
    logging.getLogger("kafka").addHandler(logged)
    opts = dict(bootstrap_servers=req["bootstrap"], security_protocol="SASL_SSL", ssl_cafile=req["ca"], sasl_mechanism=req["mechanism"],
                sasl_plain_username=req["username"], sasl_plain_password=req["password"], client_id="compat-kafka-python-3",
                bootstrap_timeout_ms=6000)
    try:
        p = KafkaProducer(acks="all", max_block_ms=5000, **opts)
        offsets = [p.send(req["topic"], value=v.encode(), partition=0).get(timeout=10).offset for v in req["values"]]
        p.close(timeout=5)
        c = KafkaConsumer(enable_auto_commit=False, consumer_timeout_ms=3000, **opts)
        tp = TopicPartition(req["topic"], 0)
        c.assign([tp])
        c.seek(tp, 0)
        values = [m.value.decode() for m in c]
        c.close()
        return {"offsets": offsets, "values": values, "error": None}
    except Exception as e:  # noqa: BLE001 - reported: the wrong-password case expects one
        return {"error": type(e).__name__, "logged": logged.messages}


def batch(req):
    return [COMMANDS[cmd]({"bootstrap": req["bootstrap"], **r}) for cmd, r in req["steps"]]


COMMANDS = {**kp.COMMANDS, "create": create, "delete": delete, "offsets": offsets, "group": group, "admin": admin, "txn": txn, "secure": secure, "batch": batch}

if __name__ == "__main__":
    # KAFKA_PYTHON_DEBUG=<file>: the client's log there (KAFKA_PYTHON_LOG_LEVEL, DEBUG by default), and
    # every thread's stack in <file>.<command>.stacks once the process has run for 50 s.
    if os.environ.get("KAFKA_PYTHON_DEBUG"):
        import faulthandler
        import logging
        logging.basicConfig(filename=os.environ["KAFKA_PYTHON_DEBUG"], level=os.environ.get("KAFKA_PYTHON_LOG_LEVEL", "DEBUG"),
                            format="%(asctime)s %(threadName)s %(name)s %(message)s")
        for name in os.environ.get("KAFKA_PYTHON_DEBUG_LOGGERS", "").split(","):
            if name:
                logging.getLogger(name).setLevel(logging.DEBUG)
        trace = open(os.environ["KAFKA_PYTHON_DEBUG"] + "." + sys.argv[1] + ".stacks", "w")
        faulthandler.dump_traceback_later(50, file=trace)
    request = json.load(sys.stdin)
    json.dump(COMMANDS[sys.argv[1]](request), sys.stdout, default=str)
