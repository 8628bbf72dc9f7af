package dev.pgkafka.compat;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

/** Exactly-once read-process-write, the way Kafka's documentation writes the loop. */
final class Txns {
  private Txns() {}

  /**
   * A read_committed group member consumes "expect" records from "input";
   * each poll's records are copied (key, value, headers, partition) to
   * "output" in one transaction that also commits the consumer's offsets
   * (sendOffsetsToTransaction). Then a transaction with "aborted" records is
   * aborted, and one with "after" records committed. Last, a second
   * producer with the same transactional.id fences the first, whose
   * transaction with the "zombie" records must fail.
   */
  static Object readProcessWrite(Runner run, JsonNode op) throws Exception {
    String input = op.path("input").asText();
    String output = op.path("output").asText();
    Properties cp = run.props(op);
    cp.put("group.id", op.path("group").asText());
    cp.put("group.protocol", "classic");
    cp.put("isolation.level", "read_committed");
    cp.put("enable.auto.commit", "false");
    cp.put("auto.offset.reset", "earliest");
    Properties pp = run.props(op);
    pp.put("transactional.id", op.path("transactionalId").asText());
    int expect = op.path("expect").asInt();
    int copied = 0;
    int transactions = 0;
    try (KafkaConsumer<byte[], byte[]> consumer = Records.consumer(cp); KafkaProducer<byte[], byte[]> producer = Records.producer(pp)) {
      producer.initTransactions();
      consumer.subscribe(List.of(input));
      long deadline = System.currentTimeMillis() + 30_000;
      while (copied < expect && System.currentTimeMillis() < deadline) {
        ConsumerRecords<byte[], byte[]> polled = consumer.poll(Duration.ofMillis(200));
        if (polled.isEmpty()) continue;
        producer.beginTransaction();
        Map<TopicPartition, OffsetAndMetadata> next = new HashMap<>();
        for (ConsumerRecord<byte[], byte[]> r : polled) {
          producer.send(new ProducerRecord<>(output, r.partition(), r.key(), r.value(), r.headers()));
          next.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
          copied++;
        }
        producer.sendOffsetsToTransaction(next, consumer.groupMetadata());
        producer.commitTransaction();
        transactions++;
      }
      producer.beginTransaction();
      for (JsonNode r : op.path("aborted")) producer.send(Records.record(output, r));
      producer.flush();
      producer.abortTransaction();
      producer.beginTransaction();
      for (JsonNode r : op.path("after")) producer.send(Records.record(output, r));
      producer.commitTransaction();
      // A second instance with the same transactional.id fences this one: its next transaction must fail.
      String zombie;
      try (KafkaProducer<byte[], byte[]> successor = Records.producer(pp)) {
        successor.initTransactions();
        try {
          producer.beginTransaction();
          for (JsonNode r : op.path("zombie")) producer.send(Records.record(output, r));
          producer.commitTransaction();
          zombie = "committed";
        } catch (Exception e) {
          zombie = Runner.describe(e);
        }
      }
      Map<String, Object> out = new LinkedHashMap<>();
      out.put("copied", copied);
      out.put("transactions", transactions);
      out.put("zombie", zombie);
      return out;
    }
  }
}
