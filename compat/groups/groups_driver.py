"""Consumer-group members driven by compat/groups/*.test.ts, with confluent-kafka-python 1.7.0
(librdkafka 2.0.2) or kafka-python 2.0.2.

Usage: /usr/bin/python3 groups_driver.py COMMAND 'JSON request'

Every event goes to stdout as one JSON line, flushed at once, so the test can
follow a member while it runs (and SIGKILL it between two lines). Commands:

  consume  one member. Events: assign / revoke (partition lists), msg (p, o, k),
           commit (p, o: the next offset), ready (positions known after an
           assignment), stall, seeked, done. Reads "stop" on stdin to close
           cleanly; stops by itself after max_s.
  members  n members in threads of this process (one thread each: a member
           must poll to rejoin), the same group; waits until every member holds
           its assignment of one generation, then produces `records` keyed
           records and consumes until all came in (plus a quiet period to catch
           duplicates). Prints one JSON answer.
"""
import json
import os
import sys
import threading
import time

OUT = threading.Lock()


def emit(**ev):
    with OUT:
        sys.stdout.write(json.dumps(ev) + "\n")
        sys.stdout.flush()


# ---------------------------------------------------------------- clients

class ConfluentMember:
    def __init__(self, req, name, on_assign, on_revoke):
        from confluent_kafka import Consumer
        conf = {
            "bootstrap.servers": req["bootstrap"], "group.id": req["group"], "client.id": name,
            "enable.auto.commit": False, "auto.offset.reset": req.get("reset", "earliest"),
            "session.timeout.ms": req.get("session_ms", 6000), "heartbeat.interval.ms": req.get("heartbeat_ms", 500),
            "max.poll.interval.ms": req.get("max_poll_ms", 30000), "topic.metadata.refresh.interval.ms": 2000,
            # EOF events tell when a partition's start position is resolved (position() is unset until a record comes).
            "enable.partition.eof": True,
        }
        if req.get("instance_id"):
            conf["group.instance.id"] = req["instance_id"]
        if req.get("strategy"):
            conf["partition.assignment.strategy"] = req["strategy"]
        if req.get("group_protocol") == "consumer":
            # KIP-848: the broker sets the session timeout and heartbeat interval and assigns
            # (librdkafka refuses the classic settings); assignments come incrementally.
            for classic_only in ("session.timeout.ms", "heartbeat.interval.ms", "partition.assignment.strategy"):
                conf.pop(classic_only, None)
            conf["group.protocol"] = "consumer"
        conf.update(req.get("conf", {}))
        self.c = Consumer(conf)
        self.topic = req["topic"]
        self.cooperative = req.get("strategy") == "cooperative-sticky" or req.get("group_protocol") == "consumer"

        self.eof = set()

        def assigned(consumer, parts):
            self.eof.difference_update(p.partition for p in parts)
            on_assign(sorted(p.partition for p in parts))
            # librdkafka assigns by itself when the callback does not; say it explicitly anyway.
            if self.cooperative:
                consumer.incremental_assign(parts)
            else:
                consumer.assign(parts)

        def revoked(consumer, parts):
            on_revoke(sorted(p.partition for p in parts))
            if self.cooperative:
                consumer.incremental_unassign(parts)
            else:
                consumer.unassign()

        self.c.subscribe([self.topic], on_assign=assigned, on_revoke=revoked)

    def poll(self, timeout_s):
        """[(partition, offset, key)] of at most a handful of records."""
        from confluent_kafka import KafkaError
        out = []
        m = self.c.poll(timeout_s)
        while m is not None:
            if m.error():
                if m.error().code() == KafkaError._PARTITION_EOF:
                    self.eof.add(m.partition())
                else:
                    emit(ev="error", error=str(m.error()))
            else:
                out.append((m.partition(), m.offset(), None if m.key() is None else m.key().decode()))
            if len(out) >= 10:
                break
            m = self.c.poll(0)
        return out

    def commit(self, offsets):
        from confluent_kafka import TopicPartition
        self.c.commit(offsets=[TopicPartition(self.topic, p, o) for p, o in offsets.items()], asynchronous=False)

    def positions(self, parts):
        """librdkafka's position() stays unset until a record is consumed: a partition is positioned
        once it delivered a record or reached its end (EOF) since the assignment."""
        from confluent_kafka import TopicPartition
        pos = [tp.offset for tp in self.c.position([TopicPartition(self.topic, p) for p in parts])]
        return [o if o >= 0 else (0 if p in self.eof else -1) for p, o in zip(parts, pos)]

    def seek(self, p, o):
        from confluent_kafka import TopicPartition
        self.c.seek(TopicPartition(self.topic, p, o))

    def close(self):
        self.c.close()


class KafkaPythonMember:
    def __init__(self, req, name, on_assign, on_revoke):
        from kafka import ConsumerRebalanceListener, KafkaConsumer
        kw = dict(bootstrap_servers=req["bootstrap"], group_id=req["group"], client_id=name, enable_auto_commit=False,
                  auto_offset_reset=req.get("reset", "earliest"), session_timeout_ms=req.get("session_ms", 6000),
                  heartbeat_interval_ms=req.get("heartbeat_ms", 500), max_poll_interval_ms=req.get("max_poll_ms", 30000),
                  metadata_max_age_ms=2000, request_timeout_ms=max(31000, req.get("max_poll_ms", 30000) + 1000))
        self.c = KafkaConsumer(**kw)
        self.topic = req["topic"]

        class Listener(ConsumerRebalanceListener):
            def on_partitions_assigned(self, parts):
                on_assign(sorted(p.partition for p in parts))

            def on_partitions_revoked(self, parts):
                on_revoke(sorted(p.partition for p in parts))

        self.c.subscribe([self.topic], listener=Listener())

    def poll(self, timeout_s):
        got = self.c.poll(timeout_ms=int(timeout_s * 1000), max_records=10)
        out = []
        for recs in got.values():
            for r in recs:
                out.append((r.partition, r.offset, None if r.key is None else r.key.decode()))
        return out

    def commit(self, offsets):
        from kafka import OffsetAndMetadata, TopicPartition
        self.c.commit({TopicPartition(self.topic, p): OffsetAndMetadata(o, "") for p, o in offsets.items()})

    def positions(self, parts):
        from kafka import TopicPartition
        return [self.c.position(TopicPartition(self.topic, p)) for p in parts]

    def seek(self, p, o):
        from kafka import TopicPartition
        self.c.seek(TopicPartition(self.topic, p), o)

    def close(self):
        self.c.close(autocommit=False)


def member(req, name, on_assign, on_revoke):
    cls = ConfluentMember if req.get("client", "confluent") == "confluent" else KafkaPythonMember
    return cls(req, name, on_assign, on_revoke)


def produce(req, records):
    """records: [[key, value], ...] keyed, partitioned by the client's default partitioner."""
    if req.get("client", "confluent") == "confluent":
        from confluent_kafka import Producer
        p = Producer({"bootstrap.servers": req["bootstrap"], "acks": "all", "linger.ms": 20})
        for k, v in records:
            p.produce(req["topic"], key=k.encode(), value=v.encode())
        assert p.flush(20) == 0
    else:
        from kafka import KafkaProducer
        p = KafkaProducer(bootstrap_servers=req["bootstrap"], acks="all", linger_ms=20)
        for k, v in records:
            p.send(req["topic"], key=k.encode(), value=v.encode())
        p.flush(20)
        p.close()


# ---------------------------------------------------------------- consume

def commit_or_report(c, pending):
    """Commits as an application does: a refused commit (ILLEGAL_GENERATION when the member's
    generation lags, as after an online downgrade) is reported and the offsets dropped; the member
    rejoins on its next heartbeat and the partitions' next owner resumes from the last commit."""
    try:
        c.commit(pending)
        emit(ev="commit", offsets=sorted(pending.items()))
    except Exception as e:  # confluent_kafka.KafkaException, kafka.errors.CommitFailedError
        emit(ev="commit_failed", offsets=sorted(pending.items()), error=str(e))


def consume(req):
    stop = threading.Event()

    def stdin_reader():
        for line in sys.stdin:
            if line.strip() == "stop":
                stop.set()
                return

    threading.Thread(target=stdin_reader, daemon=True).start()
    owned = set()
    state = {"new_assignment": False}

    def stamp():
        # "stamp": assign, revoke and msg events carry their wall-clock time (ownership overlaps, pauses).
        return {"t": time.time()} if req.get("stamp") else {}

    def on_assign(parts):
        if req.get("strategy") == "cooperative-sticky" or req.get("group_protocol") == "consumer":
            owned.update(parts)
        else:
            owned.clear()
            owned.update(parts)
        state["new_assignment"] = True
        emit(ev="assign", partitions=parts, owned=sorted(owned), **stamp())

    def on_revoke(parts):
        owned.difference_update(parts)
        emit(ev="revoke", partitions=parts, owned=sorted(owned), **stamp())

    c = member(req, req.get("name", "member"), on_assign, on_revoke)
    commit_every = req.get("commit_every", 0)
    stall_after = req.get("stall_after")
    seek_zero_after = req.get("seek_zero_after")
    process_ms = req.get("process_ms", 0)
    deadline = time.time() + req.get("max_s", 25)
    pending = {}
    processed = 0
    seeked = False
    while not stop.is_set() and time.time() < deadline:
        msgs = c.poll(0.1)
        if state["new_assignment"] and owned:
            pos = c.positions(sorted(owned))
            if all(o is not None and o >= 0 for o in pos):
                state["new_assignment"] = False
                emit(ev="ready", partitions=sorted(owned), positions=pos)
                if req.get("produce_when_ready"):
                    produce(req, req["produce_when_ready"])
                    emit(ev="produced", n=len(req["produce_when_ready"]))
                    req["produce_when_ready"] = None
        for p, o, k in msgs:
            if process_ms:
                time.sleep(process_ms / 1000)
            processed += 1
            emit(ev="msg", p=p, o=o, k=k, **stamp())
            pending[p] = o + 1
            if commit_every and processed % commit_every == 0:
                commit_or_report(c, pending)
                pending = {}
            if stall_after is not None and processed == stall_after:
                emit(ev="stall")
                # Stop calling poll (max.poll.interval.ms runs out) until told to stop.
                stop.wait(req.get("stall_s", 20))
                emit(ev="done", processed=processed)
                os._exit(0)
        if seek_zero_after is not None and not seeked and processed >= seek_zero_after:
            seeked = True
            for p in sorted(owned):
                c.seek(p, 0)
            emit(ev="seeked", partitions=sorted(owned))
    if pending and commit_every:
        commit_or_report(c, pending)
    c.close()
    emit(ev="done", processed=processed)


# ---------------------------------------------------------------- members

def members(req):
    n = req["n"]
    stop = threading.Event()
    lock = threading.Lock()
    current = [None] * n  # the partitions each member holds now (None: not assigned yet / revoked)
    assigns = [[] for _ in range(n)]
    consumed = []
    errors = []

    def run(i):
        def on_assign(parts):
            with lock:
                current[i] = parts
                assigns[i].append(parts)

        def on_revoke(parts):
            with lock:
                current[i] = None

        try:
            c = member(req, "m%02d" % i, on_assign, on_revoke)
            while not stop.is_set():
                got = c.poll(0.1)
                if got:
                    with lock:
                        consumed.extend([i, p, o, k] for p, o, k in got)
                    offs = {}
                    for p, o, _ in got:
                        offs[p] = o + 1
                    c.commit(offs)
            c.close()
        except Exception as e:  # reported in the answer
            errors.append("m%02d: %r" % (i, e))

    started = time.time()
    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    deadline = time.time() + req.get("join_s", 40)
    stable = False
    while time.time() < deadline:
        with lock:
            if all(c is not None for c in current):
                flat = [p for c in current for p in c]
                stable = sorted(flat) == list(range(req["partitions"]))
        if stable:
            break
        time.sleep(0.1)
    settled_at = time.time()
    total = req["records"]
    if stable:
        produce(req, [["key-%d" % i, "value-%d" % i] for i in range(total)])
        deadline = time.time() + req.get("consume_s", 30)
        while time.time() < deadline and len(consumed) < total:
            time.sleep(0.1)
        time.sleep(req.get("quiet_s", 2))  # duplicates, if any, would come now
    with lock:
        final = list(current)  # closing revokes: take the assignments before
    stop.set()
    for t in threads:
        t.join(30)
    print(json.dumps({"stable": stable, "join_s": round(settled_at - started, 2), "current": final, "assigns": assigns,
                      "consumed": consumed, "errors": errors}))
    sys.stdout.flush()


COMMANDS = {"consume": consume, "members": members}

if __name__ == "__main__":
    COMMANDS[sys.argv[1]](json.loads(sys.argv[2]))
