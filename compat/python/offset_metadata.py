"""kafka-python 2.0.2 commits offsets with metadata and reads them back, driven by compat/offset-metadata.test.ts.

Usage: offset_metadata.py < request.json > answer.json
request: {"bootstrap", "group", "topic", "commits": [[partition, offset, metadata]]}
answer: {"committed": [[partition, offset, metadata]]} as KafkaAdminClient.list_consumer_group_offsets reads them.
"""
import json
import sys

from kafka import KafkaConsumer, TopicPartition
from kafka.admin import KafkaAdminClient
from kafka.structs import OffsetAndMetadata


def main(req):
    # A consumer with a group but a manual assignment commits without a generation, as admin tools do.
    c = KafkaConsumer(bootstrap_servers=req["bootstrap"], group_id=req["group"], enable_auto_commit=False, client_id="compat-kafka-python")
    tps = [TopicPartition(req["topic"], p) for p, _, _ in req["commits"]]
    c.assign(tps)
    c.commit({TopicPartition(req["topic"], p): OffsetAndMetadata(o, m) for p, o, m in req["commits"]})
    c.close()
    a = KafkaAdminClient(bootstrap_servers=req["bootstrap"], request_timeout_ms=10000, client_id="compat-kafka-python")
    offsets = a.list_consumer_group_offsets(req["group"])
    a.close()
    return {"committed": sorted([tp.partition, om.offset, om.metadata] for tp, om in offsets.items())}


if __name__ == "__main__":
    json.dump(main(json.load(sys.stdin)), sys.stdout)
