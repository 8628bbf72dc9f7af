package dev.pgkafka.compat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * End-to-end latency at a fixed rate (the benchmark's kafka section): a
 * producer with the client's defaults (idempotent, acks=all) sends one
 * record every 1/rate s on a fixed schedule, without waiting for
 * acknowledgements; a consumer of the same JVM reads partition 0 and takes,
 * for each record, the time from its scheduled send to its arrival (the
 * schedule is written in the value, System.nanoTime of this JVM), so a stall
 * counts for every record it delays. Records of the first second are warm-up.
 */
final class Latency {
  private Latency() {}

  static Object run(Runner r, JsonNode op) throws Exception {
    String topic = op.path("topic").asText();
    int rate = op.path("rate").asInt(1000);
    int seconds = op.path("seconds").asInt(10);
    int valueSize = Math.max(16, op.path("valueSize").asInt(100));
    int total = rate * seconds;
    long periodNs = 1_000_000_000L / rate;

    Properties cp = r.props(op);
    cp.put("key.deserializer", ByteArrayDeserializer.class.getName());
    cp.put("value.deserializer", ByteArrayDeserializer.class.getName());
    cp.put("enable.auto.commit", "false");
    Properties pp = r.props(op);
    pp.put("key.serializer", ByteArraySerializer.class.getName());
    pp.put("value.serializer", ByteArraySerializer.class.getName());

    TopicPartition tp = new TopicPartition(topic, 0);
    List<Long> latenciesNs = Collections.synchronizedList(new ArrayList<>(total));
    AtomicBoolean done = new AtomicBoolean(false);
    long[] received = {0};
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(cp); KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(pp)) {
      consumer.assign(List.of(tp));
      consumer.seekToEnd(List.of(tp));
      consumer.position(tp);
      producer.partitionsFor(topic); // metadata before the clock starts
      Thread reader = new Thread(() -> {
        while (!done.get() && received[0] < total) {
          for (ConsumerRecord<byte[], byte[]> rec : consumer.poll(Duration.ofMillis(100))) {
            long now = System.nanoTime();
            ByteBuffer v = ByteBuffer.wrap(rec.value());
            long scheduled = v.getLong();
            long index = v.getLong();
            if (index >= rate) latenciesNs.add(now - scheduled);
            received[0]++;
          }
        }
      });
      reader.start();
      long start = System.nanoTime() + 100_000_000L;
      for (int i = 0; i < total; i++) {
        long scheduled = start + i * periodNs;
        long wait;
        while ((wait = scheduled - System.nanoTime()) > 0) {
          if (wait > 200_000) LockSupport.parkNanos(wait - 100_000); else Thread.onSpinWait();
        }
        ByteBuffer v = ByteBuffer.allocate(valueSize);
        v.putLong(scheduled).putLong(i);
        producer.send(new ProducerRecord<>(topic, 0, null, v.array()));
      }
      producer.flush();
      reader.join(30_000);
      done.set(true);
      reader.join();
    }
    List<Long> sorted = new ArrayList<>(latenciesNs);
    Collections.sort(sorted);
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("sent", total);
    out.put("received", received[0]);
    out.put("p50Ms", percentileMs(sorted, 50));
    out.put("p99Ms", percentileMs(sorted, 99));
    out.put("maxMs", sorted.isEmpty() ? null : sorted.get(sorted.size() - 1) / 1e6);
    return out;
  }

  private static Double percentileMs(List<Long> sorted, int p) {
    if (sorted.isEmpty()) return null;
    int rank = (int) Math.ceil(p / 100.0 * sorted.size());
    return sorted.get(Math.max(0, Math.min(sorted.size() - 1, rank - 1))) / 1e6;
  }
}
