package dev.pgkafka.compat;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/** Producing with KafkaProducer and reading back with a group-less KafkaConsumer (assign + seek). */
final class Records {
  private Records() {}

  static KafkaProducer<byte[], byte[]> producer(Properties p) {
    return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
  }

  static KafkaConsumer<byte[], byte[]> consumer(Properties p) {
    return new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
  }

  static ProducerRecord<byte[], byte[]> record(String topic, JsonNode r) {
    List<Header> headers = new ArrayList<>();
    for (JsonNode h : r.path("headers")) headers.add(new RecordHeader(h.get(0).asText(), Runner.bytes(h.get(1))));
    Long ts = r.hasNonNull("timestamp") ? r.get("timestamp").asLong() : null;
    Integer partition = r.hasNonNull("partition") ? r.get("partition").asInt() : null;
    return new ProducerRecord<>(topic, partition, ts, Runner.bytes(r.get("key")), Runner.bytes(r.get("value")), headers);
  }

  /** Sends every record (producer defaults unless the op's config says otherwise) and reports each one's metadata. */
  static Object produce(Runner run, JsonNode op) throws Exception {
    String topic = op.path("topic").asText();
    try (KafkaProducer<byte[], byte[]> producer = producer(run.props(op))) {
      List<Future<RecordMetadata>> sent = new ArrayList<>();
      for (JsonNode r : op.path("records")) sent.add(producer.send(record(topic, r)));
      producer.flush();
      List<Object> delivered = new ArrayList<>();
      for (Future<RecordMetadata> f : sent) {
        RecordMetadata m = f.get();
        delivered.add(Map.of("partition", m.partition(), "offset", m.offset(), "timestamp", m.timestamp()));
      }
      return Map.of("delivered", delivered);
    }
  }

  /**
   * "count" records per partition of "topic", value "<partition>-<i>", sent
   * without waiting so that many batches are in flight at once (the op's
   * config picks batch.size, linger.ms...); reports whether each record's
   * offset was i, in send order.
   */
  static Object produceMany(Runner run, JsonNode op) throws Exception {
    String topic = op.path("topic").asText();
    int partitions = op.path("partitions").asInt();
    int count = op.path("count").asInt();
    try (KafkaProducer<byte[], byte[]> producer = producer(run.props(op))) {
      List<List<Future<RecordMetadata>>> sent = new ArrayList<>();
      for (int p = 0; p < partitions; p++) sent.add(new ArrayList<>());
      for (int i = 0; i < count; i++) {
        for (int p = 0; p < partitions; p++) {
          byte[] value = (p + "-" + i).getBytes(java.nio.charset.StandardCharsets.UTF_8);
          sent.get(p).add(producer.send(new ProducerRecord<>(topic, p, null, value)));
        }
      }
      producer.flush();
      List<Object> wrong = new ArrayList<>();
      for (int p = 0; p < partitions; p++) {
        for (int i = 0; i < count; i++) {
          long offset = sent.get(p).get(i).get().offset();
          if (offset != i && wrong.size() < 10) wrong.add(Map.of("partition", p, "record", i, "offset", offset));
        }
      }
      return Map.of("sent", partitions * count, "wrongOffsets", wrong);
    }
  }

  static Map<String, Object> json(ConsumerRecord<byte[], byte[]> r) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("partition", r.partition());
    m.put("offset", r.offset());
    m.put("timestamp", r.timestamp());
    m.put("key", Runner.b64(r.key()));
    m.put("value", Runner.b64(r.value()));
    List<Object> headers = new ArrayList<>();
    for (Header h : r.headers()) headers.add(java.util.Arrays.asList(h.key(), Runner.b64(h.value())));
    m.put("headers", headers);
    return m;
  }

  static List<TopicPartition> partitions(JsonNode op) {
    List<TopicPartition> tps = new ArrayList<>();
    for (JsonNode p : op.path("partitions")) tps.add(new TopicPartition(op.path("topic").asText(), p.asInt()));
    return tps;
  }

  /**
   * assign() the partitions and seek: to "from" (partition → offset), to
   * "fromEnd" records before the end, or to the beginning; then poll until
   * every partition's position reaches its end offset (as this consumer's
   * isolation level sees it) or 20 s pass.
   */
  static Object consume(Runner run, JsonNode op) {
    Properties p = run.props(op);
    p.putIfAbsent("enable.auto.commit", "false");
    try (KafkaConsumer<byte[], byte[]> consumer = consumer(p)) {
      List<TopicPartition> tps = partitions(op);
      consumer.assign(tps);
      Map<TopicPartition, Long> end = consumer.endOffsets(tps);
      for (TopicPartition tp : tps) {
        String key = String.valueOf(tp.partition());
        if (op.path("from").has(key)) consumer.seek(tp, op.path("from").get(key).asLong());
        else if (op.has("fromEnd")) consumer.seek(tp, Math.max(0, end.get(tp) - op.get("fromEnd").asLong()));
        else consumer.seekToBeginning(List.of(tp));
      }
      List<Object> records = new ArrayList<>();
      long deadline = System.currentTimeMillis() + 20_000;
      while (System.currentTimeMillis() < deadline && !caughtUp(consumer, tps, end)) {
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) records.add(json(r));
      }
      // "idleMs": keep polling that long once caught up (fetches with nothing new).
      long idleUntil = System.currentTimeMillis() + op.path("idleMs").asLong(0);
      while (System.currentTimeMillis() < idleUntil) {
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) records.add(json(r));
      }
      Map<String, Long> positions = new LinkedHashMap<>();
      for (TopicPartition tp : tps) positions.put(String.valueOf(tp.partition()), consumer.position(tp));
      Map<String, Long> ends = new LinkedHashMap<>();
      for (TopicPartition tp : tps) ends.put(String.valueOf(tp.partition()), end.get(tp));
      return Map.of("records", records, "positions", positions, "end", ends);
    }
  }

  private static boolean caughtUp(KafkaConsumer<byte[], byte[]> c, List<TopicPartition> tps, Map<TopicPartition, Long> end) {
    for (TopicPartition tp : tps) if (c.position(tp) < end.get(tp)) return false;
    return true;
  }

  /** beginningOffsets, endOffsets and offsetsForTimes for each named timestamp ("times": {name: ms}). */
  static Object offsets(Runner run, JsonNode op) {
    try (KafkaConsumer<byte[], byte[]> consumer = consumer(run.props(op))) {
      List<TopicPartition> tps = partitions(op);
      Map<String, Object> out = new LinkedHashMap<>();
      out.put("beginning", list(tps, consumer.beginningOffsets(tps)));
      out.put("end", list(tps, consumer.endOffsets(tps)));
      Map<String, Object> forTimes = new LinkedHashMap<>();
      var it = op.path("times").fields();
      while (it.hasNext()) {
        var e = it.next();
        Map<TopicPartition, Long> query = new HashMap<>();
        for (TopicPartition tp : tps) query.put(tp, e.getValue().asLong());
        Map<TopicPartition, OffsetAndTimestamp> found = consumer.offsetsForTimes(query);
        List<Object> row = new ArrayList<>();
        for (TopicPartition tp : tps) {
          OffsetAndTimestamp f = found.get(tp);
          row.add(f == null ? null : Map.of("offset", f.offset(), "timestamp", f.timestamp()));
        }
        forTimes.put(e.getKey(), row);
      }
      out.put("forTimes", forTimes);
      return out;
    }
  }

  private static List<Long> list(List<TopicPartition> tps, Map<TopicPartition, Long> m) {
    List<Long> out = new ArrayList<>();
    for (TopicPartition tp : tps) out.add(m.get(tp));
    return out;
  }
}
