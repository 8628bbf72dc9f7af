"""aiokafka 0.14 (asyncio) from PyPI driven by compat/aiokafka.test.ts.

Usage: <venv python> pypi_aiokafka.py COMMAND < request.json > answer.json
Keys, values and header values travel as base64 (null stays null).
Commands: create, list, delete, produce, consume (assign + seek, no group; from_end: N before the end),
offsets, group (two members: subscribe, commit, a second member joins),
admin (configs, partitions, groups), idempotent, txn (transactions and a
read_committed reader), secure (SASL_SSL with the test CA trusted: produce and read
back, or the error a wrong password gets), batch ({"steps": [[command, request], ...]} in one process).
"""
import asyncio
import base64
import json
import logging
import sys
import time

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewPartitions, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.helpers import create_ssl_context
from aiokafka.structs import OffsetAndMetadata


def b64(b):
    return None if b is None else base64.b64encode(b).decode()


def unb64(s):
    return None if s is None else base64.b64decode(s)


def record(m):
    return {"partition": m.partition, "offset": m.offset, "key": b64(m.key), "value": b64(m.value),
            "headers": [[k, b64(v)] for k, v in (m.headers or [])]}


async def admin_client(req):
    a = AIOKafkaAdminClient(bootstrap_servers=req["bootstrap"], request_timeout_ms=10000, client_id="compat-aiokafka")
    await a.start()
    return a


async def create(req):
    a = await admin_client(req)
    try:
        r = await a.create_topics([NewTopic(t["name"], t["partitions"], 1, topic_configs=t.get("configs") or {}) for t in req["topics"]])
        return {"errors": [[e[0], e[1]] for e in r.topic_errors]}
    finally:
        await a.close()


async def list_(req):
    a = await admin_client(req)
    try:
        topics = await a.list_topics()
        described = await a.describe_topics(req.get("describe", [])) if req.get("describe") else []
        return {"topics": sorted(topics),
                "partitions": {t["topic"]: sorted([p["partition"], p["leader"], p["replicas"]] for p in t["partitions"]) for t in described}}
    finally:
        await a.close()


async def delete(req):
    a = await admin_client(req)
    try:
        r = await a.delete_topics(req["topics"])
        return {"errors": [[e[0], e[1]] for e in r.topic_error_codes]}
    finally:
        await a.close()


async def produce(req, extra=None):
    codec = req.get("codec")
    p = AIOKafkaProducer(bootstrap_servers=req["bootstrap"], acks="all", linger_ms=50, client_id="compat-aiokafka",
                         compression_type=None if codec in (None, "none") else codec, **(extra or {}))
    await p.start()
    try:
        futures = [await p.send(req["topic"], key=unb64(r["key"]), value=unb64(r["value"]), partition=r["partition"],
                                headers=[(k, unb64(v)) for k, v in r["headers"]]) for r in req["records"]]
        out = [(await f) for f in futures]
        return {"delivered": [{"partition": md.partition, "offset": md.offset} for md in out]}
    finally:
        await p.stop()


async def consume(req):
    # assign() starts resolving each position by auto_offset_reset in the background; a seek_to_beginning() racing
    # with that lookup can lose to it (seen: a partition read from its end). So: reset to earliest, wait for
    # the positions, then seek.
    c = AIOKafkaConsumer(bootstrap_servers=req["bootstrap"], enable_auto_commit=False, client_id="compat-aiokafka",
                         auto_offset_reset="earliest", isolation_level=req.get("isolation", "read_uncommitted"))
    await c.start()
    try:
        tps = [TopicPartition(req["topic"], p) for p in req["partitions"]]
        c.assign(tps)
        ends = await c.end_offsets(tps)
        for tp in tps:
            await c.position(tp)
            if req.get("from_end") is not None:
                c.seek(tp, max(0, ends[tp] - req["from_end"]))
            elif req.get("offset") is not None:
                c.seek(tp, req["offset"])
        out, deadline = [], time.time() + 20
        while time.time() < deadline:
            got = await c.getmany(timeout_ms=300)
            for _tp, msgs in got.items():
                out.extend(record(m) for m in msgs)
            # The position can run ahead of what getmany has handed out (prefetched records): stop only on an empty poll.
            if not got and all([await c.position(tp) >= ends[tp] for tp in tps]):
                break
        return {"records": out}
    finally:
        await c.stop()


async def offsets(req):
    c = AIOKafkaConsumer(bootstrap_servers=req["bootstrap"], enable_auto_commit=False)
    await c.start()
    try:
        tps = [TopicPartition(req["topic"], p) for p in req["partitions"]]
        begin, end = await c.beginning_offsets(tps), await c.end_offsets(tps)
        by_ts = {}
        for ts in req.get("timestamps", []):
            found = await c.offsets_for_times({tp: ts for tp in tps})
            by_ts[str(ts)] = [None if found[tp] is None else found[tp].offset for tp in tps]
        return {"earliest": [begin[tp] for tp in tps], "latest": [end[tp] for tp in tps], "by_timestamp": by_ts}
    finally:
        await c.stop()


async def member(req, name):
    c = AIOKafkaConsumer(req["topic"], bootstrap_servers=req["bootstrap"], group_id=req["group"], client_id=name,
                         enable_auto_commit=False, auto_offset_reset="earliest", session_timeout_ms=6000,
                         heartbeat_interval_ms=500, metadata_max_age_ms=2000)
    await c.start()
    return c


async def poll_into(c, got):
    for tp, msgs in (await c.getmany(timeout_ms=100)).items():
        got.extend(record(m) for m in msgs)
        if msgs:
            await c.commit({tp: msgs[-1].offset + 1})


async def group(req):
    """A joins alone and reads the `first` records already there, committing; B joins; `records` are produced and both read them."""
    out = {}
    tps = [TopicPartition(req["topic"], p) for p in range(req["partitions"])]
    a = await member(req, "member-a")
    got_a, deadline = [], time.time() + 20
    while len(got_a) < req["first"] and time.time() < deadline:
        await poll_into(a, got_a)
    out["a_alone"] = {"assigned": sorted(tp.partition for tp in a.assignment()), "records": got_a}
    out["committed_before_b"] = [await a.committed(tp) for tp in tps]
    b = await member(req, "member-b")
    early, deadline = [], time.time() + 25
    # aiokafka rejoins in the background (its coordinator task), but fetches only while someone polls.
    while time.time() < deadline:
        await poll_into(a, early)
        await poll_into(b, early)
        sa, sb = [tp.partition for tp in a.assignment()], [tp.partition for tp in b.assignment()]
        if sa and sb and sorted(sa + sb) == list(range(req["partitions"])):
            break
    out["early"] = early
    out["after_join"] = {"a": sorted(tp.partition for tp in a.assignment()), "b": sorted(tp.partition for tp in b.assignment())}
    await produce({"bootstrap": req["bootstrap"], "topic": req["topic"], "records": req["records"]})
    got, deadline = {"a": [], "b": []}, time.time() + 20
    while len(got["a"]) + len(got["b"]) < len(req["records"]) and time.time() < deadline:
        await poll_into(a, got["a"])
        await poll_into(b, got["b"])
    out["after"] = got
    out["committed"] = [await b.committed(tp) for tp in tps]
    await a.stop()
    await b.stop()
    return out


async def attempt(coro):
    try:
        return [None, await coro]
    except Exception as e:  # noqa: BLE001 - reported, not raised
        return [type(e).__name__ + ": " + str(e), None]


async def admin(req):
    a = await admin_client(req)
    topic, grp = req["topic"], req["group"]
    keys = ["retention.ms", "cleanup.policy", "compression.type"]
    res = {}

    async def describe():
        (r,) = await a.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic, {k: None for k in keys})])
        (err, _msg, _type, _name, entries), = r.resources
        # (name, value, read_only, is_default or config_source, is_sensitive, ...) by DescribeConfigs version
        return [err, sorted([e[0], e[1]] for e in entries)]

    async def alter():
        (r,) = await a.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic, {"retention.ms": "3600000", "cleanup.policy": "compact"})])
        return [e[0] for e in r.resources]

    async def partitions(n):
        r = await a.create_partitions({topic: NewPartitions(n)})
        return [e[1] for e in r.topic_errors]

    try:
        res["describe"] = await attempt(describe())
        res["alter"] = await attempt(alter())
        res["after_alter"] = await attempt(describe())
        res["create_partitions"] = await attempt(partitions(5))
        res["fewer_partitions"] = await attempt(partitions(2))
        res["partitions"] = (await list_({"bootstrap": req["bootstrap"], "describe": [topic]}))["partitions"][topic]
        c = AIOKafkaConsumer(bootstrap_servers=req["bootstrap"], enable_auto_commit=False, group_id=grp)
        await c.start()
        # Offsets committed without joining (a simple consumer group); aiokafka commits only for assigned partitions.
        c.assign([TopicPartition(topic, 0), TopicPartition(topic, 1)])
        await c.commit({TopicPartition(topic, 0): OffsetAndMetadata(3, ""), TopicPartition(topic, 1): OffsetAndMetadata(1, "")})
        await c.stop()

        async def list_groups():
            return sorted(g[0] for g in await a.list_consumer_groups())

        async def describe_group():
            (r,) = await a.describe_consumer_groups([grp])
            g = r.groups[0]
            return {"error": g[0], "group": g[1], "state": g[2], "protocol_type": g[3], "members": len(g[5])}

        async def group_offsets():
            found = await a.list_consumer_group_offsets(grp)
            return sorted([tp.partition, om.offset] for tp, om in found.items())

        res["list_groups"] = await attempt(list_groups())
        res["describe_group"] = await attempt(describe_group())
        res["group_offsets"] = await attempt(group_offsets())
    finally:
        await a.close()
    return res


async def idempotent(req):
    return await produce(req, {"enable_idempotence": True})


async def txn(req):
    """Commit c0..c4, abort a0..a2, then commit o0..o1 with an offset for `group`; read back both ways."""
    topic, tp = req["topic"], TopicPartition(req["topic"], 0)
    p = AIOKafkaProducer(bootstrap_servers=req["bootstrap"], transactional_id=req["txn_id"], linger_ms=5)
    await p.start()
    out = {}
    try:
        async with p.transaction():
            for i in range(5):
                await p.send_and_wait(topic, ("c%d" % i).encode(), partition=0)
        await p.begin_transaction()
        for i in range(3):
            await p.send_and_wait(topic, ("a%d" % i).encode(), partition=0)
        await p.abort_transaction()
        async with p.transaction():
            for i in range(2):
                await p.send_and_wait(topic, ("o%d" % i).encode(), partition=0)
            await p.send_offsets_to_transaction({tp: 4}, req["group"])
    finally:
        await p.stop()
    a = await admin_client(req)
    try:
        out["group_offset"] = (await a.list_consumer_group_offsets(req["group"]))[tp].offset
    finally:
        await a.close()
    for isolation in ("read_committed", "read_uncommitted"):
        c = AIOKafkaConsumer(bootstrap_servers=req["bootstrap"], enable_auto_commit=False, isolation_level=isolation,
                             auto_offset_reset="earliest")
        await c.start()
        try:
            c.assign([tp])
            end = (await c.end_offsets([tp]))[tp]
            values, deadline = [], time.time() + 15
            while await c.position(tp) < end and time.time() < deadline:
                for _tp, msgs in (await c.getmany(timeout_ms=500)).items():
                    values.extend(m.value.decode() for m in msgs)
            out[isolation] = {"values": values, "end": end, "lso": c.last_stable_offset(tp)}
        finally:
            await c.stop()
    return out


async def secure(req):
    """Produces `values` to partition 0 of `topic` and reads them back, over SASL_SSL with `mechanism`; the error's class reported.

    start() logs why each bootstrap host failed (a refused login: SaslAuthenticationFailed, error 58) and raises
    KafkaConnectionError when none is left; both are reported.
    """
    logged = Collect()
    logging.getLogger("aiokafka").addHandler(logged)
    opts = dict(bootstrap_servers=req["bootstrap"], security_protocol="SASL_SSL", ssl_context=create_ssl_context(cafile=req["ca"]),
                sasl_mechanism=req["mechanism"], sasl_plain_username=req["username"], sasl_plain_password=req["password"],
                client_id="compat-aiokafka")
    try:
        p = AIOKafkaProducer(acks="all", **opts)
        await p.start()
        try:
            offsets = [(await p.send_and_wait(req["topic"], v.encode(), partition=0)).offset for v in req["values"]]
        finally:
            await p.stop()
        c = AIOKafkaConsumer(enable_auto_commit=False, auto_offset_reset="earliest", **opts)
        await c.start()
        try:
            tp = TopicPartition(req["topic"], 0)
            c.assign([tp])
            values, deadline = [], time.time() + 10
            while len(values) < len(req["values"]) and time.time() < deadline:
                for _tp, msgs in (await c.getmany(timeout_ms=300)).items():
                    values.extend(m.value.decode() for m in msgs)
        finally:
            await c.stop()
        return {"offsets": offsets, "values": values, "error": None}
    except Exception as e:  # noqa: BLE001 - reported: the wrong-password case expects one
        return {"error": type(e).__name__, "logged": logged.messages}


class Collect(logging.Handler):
    """The client's warnings and errors, each once."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        if record.getMessage() not in self.messages:
            self.messages.append(record.getMessage())


async def batch(req):
    return [await COMMANDS[cmd]({"bootstrap": req["bootstrap"], **r}) for cmd, r in req["steps"]]


COMMANDS = {"create": create, "list": list_, "delete": delete, "produce": produce, "consume": consume, "offsets": offsets,
            "group": group, "admin": admin, "idempotent": idempotent, "txn": txn, "secure": secure, "batch": batch}

if __name__ == "__main__":
    request = json.load(sys.stdin)
    json.dump(asyncio.run(COMMANDS[sys.argv[1]](request)), sys.stdout, default=str)
