package dev.pgkafka.compat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.SubscriptionPattern;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * Members joining a group one at a time while a producer keeps writing (issue
 * 17's first scenario), with either group protocol: every partition owned by
 * at most one member at any moment (judged in the members' own rebalance
 * callbacks), every record consumed exactly once (commitSync after each poll
 * and when partitions are revoked), and the longest pause each member saw
 * between two records while the group grew.
 */
final class Kip848 {
  private Kip848() {}

  /** Partition → the member holding it, as the callbacks say; a second holder is a violation. */
  static final class Ownership {
    final Map<Integer, String> owner = new HashMap<>();
    final List<String> violations = new ArrayList<>();

    synchronized void assigned(String member, Collection<TopicPartition> tps) {
      for (TopicPartition tp : tps) {
        String previous = owner.putIfAbsent(tp.partition(), member);
        if (previous != null && !previous.equals(member)) violations.add(tp.partition() + " assigned to " + member + " while " + previous + " holds it");
      }
    }

    synchronized void released(String member, Collection<TopicPartition> tps) {
      for (TopicPartition tp : tps) owner.remove(tp.partition(), member);
    }

    synchronized int owned() {
      return owner.size();
    }

    synchronized long ownedBy(String member) {
      return owner.values().stream().filter(member::equals).count();
    }
  }

  static final class Member implements Runnable {
    void commit() {
      try {
        consumer.commitSync(Duration.ofSeconds(10));
      } catch (org.apache.kafka.clients.consumer.CommitFailedException e) {
        if (!tolerateCommitFailures) throw e;
        commitFailures.incrementAndGet();
      }
    }

    final String name;
    final KafkaConsumer<byte[], byte[]> consumer;
    final String topic;
    final Ownership ownership;
    final Map<String, Integer> seen;
    final AtomicBoolean stop = new AtomicBoolean();
    final AtomicBoolean measuring;
    final Thread thread;
    volatile long lastRecordAt = 0;
    volatile long longestPause = 0;
    volatile String error;
    /**
     * A commit refused as the group moved on (a classic member's generation is
     * stale after a rebalance or a protocol change) is counted, not fatal: its
     * records come again to the partitions' next owner.
     */
    volatile boolean tolerateCommitFailures;
    final AtomicInteger commitFailures = new AtomicInteger();

    Member(Runner run, JsonNode op, String name, String groupProtocol, Ownership ownership, Map<String, Integer> seen, AtomicBoolean measuring) {
      this.name = name;
      this.topic = op.path("topic").asText();
      this.ownership = ownership;
      this.seen = seen;
      this.measuring = measuring;
      Properties p = run.props(op);
      p.put("group.id", op.path("group").asText());
      p.put("group.protocol", groupProtocol);
      p.put("client.id", name);
      p.put("auto.offset.reset", "earliest");
      p.put("enable.auto.commit", "false");
      consumer = Records.consumer(p);
      thread = new Thread(this, name);
    }

    @Override
    public void run() {
      try {
        consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
          @Override
          public void onPartitionsRevoked(Collection<TopicPartition> tps) {
            // What was read is committed before the partitions go, so their next owner starts after it.
            commit();
            ownership.released(name, tps);
          }

          @Override
          public void onPartitionsLost(Collection<TopicPartition> tps) {
            ownership.released(name, tps);
          }

          @Override
          public void onPartitionsAssigned(Collection<TopicPartition> tps) {
            ownership.assigned(name, tps);
          }
        });
        while (!stop.get()) {
          ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
          long now = System.currentTimeMillis();
          if (!records.isEmpty()) {
            if (lastRecordAt > 0 && measuring.get()) longestPause = Math.max(longestPause, now - lastRecordAt);
            lastRecordAt = now;
            for (ConsumerRecord<byte[], byte[]> r : records) seen.merge(r.partition() + ":" + r.offset(), 1, Integer::sum);
            commit();
          }
        }
      } catch (Exception e) {
        error = Runner.describe(e);
      } finally {
        consumer.close(org.apache.kafka.clients.consumer.CloseOptions.timeout(Duration.ofSeconds(10)));
      }
    }
  }

  /**
   * "members" consumers of group "group" ("groupProtocol": consumer or
   * classic) join every "joinEveryMs" while a producer writes one record to
   * each of the topic's "partitions" partitions every 100 ms; once all have
   * joined and every partition is owned again for "settleMs", production
   * stops and the members read everything.
   */
  static Object joinOneAtATime(Runner run, JsonNode op) throws Exception {
    int partitions = op.path("partitions").asInt();
    int n = op.path("members").asInt();
    Ownership ownership = new Ownership();
    Map<String, Integer> seen = new ConcurrentHashMap<>();
    AtomicBoolean measuring = new AtomicBoolean(true);
    Producing producer = new Producing(run, op.path("topic").asText(), partitions);
    List<Member> members = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Member m = new Member(run, op, "m" + i, op.path("groupProtocol").asText(), ownership, seen, measuring);
      members.add(m);
      m.thread.start();
      Thread.sleep(op.path("joinEveryMs").asLong(1000));
    }
    long settleMs = op.path("settleMs").asLong(3000);
    long settledSince = 0;
    long deadline = System.currentTimeMillis() + 60_000;
    while (System.currentTimeMillis() < deadline) {
      if (ownership.owned() == partitions) {
        if (settledSince == 0) settledSince = System.currentTimeMillis();
        if (System.currentTimeMillis() - settledSince >= settleMs) break;
      } else {
        settledSince = 0;
      }
      Thread.sleep(100);
    }
    measuring.set(false);
    int total = producer.stop();
    Groups.await(() -> seen.size() >= total, 30_000);
    Thread.sleep(1500); // duplicates, if any, would come now
    for (Member m : members) m.stop.set(true);
    for (Member m : members) m.thread.join(30_000);
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("sent", total);
    out.put("distinct", seen.size());
    out.put("duplicates", seen.values().stream().filter(c -> c > 1).count());
    out.put("violations", ownership.violations);
    out.put("pausesMs", members.stream().map(m -> m.longestPause).toList());
    List<String> errors = new ArrayList<>(producer.errors);
    for (Member m : members) if (m.error != null) errors.add(m.name + ": " + m.error);
    out.put("errors", errors);
    return out;
  }

  /** A producer writing one record to each partition every 100 ms, until stopped. */
  static final class Producing {
    final AtomicBoolean producing = new AtomicBoolean(true);
    final AtomicInteger sent = new AtomicInteger();
    final List<String> errors = new ArrayList<>();
    final Thread thread;

    Producing(Runner run, String topic, int partitions) {
      thread = new Thread(() -> {
        try (KafkaProducer<byte[], byte[]> p = Records.producer(run.props(null))) {
          while (producing.get()) {
            for (int i = 0; i < partitions; i++) p.send(new ProducerRecord<>(topic, i, null, ("v" + sent.get() + "-" + i).getBytes(StandardCharsets.UTF_8))).get();
            sent.addAndGet(partitions);
            Thread.sleep(100);
          }
        } catch (Exception e) {
          synchronized (errors) {
            errors.add(Runner.describe(e));
          }
        }
      }, "producer");
      thread.start();
    }

    /** Stops it; the number of records it wrote. */
    int stop() throws InterruptedException {
      producing.set(false);
      thread.join(30_000);
      return sent.get();
    }
  }

  /**
   * Issue 17's fifth scenario: "members" members of group "group" with the
   * first of "phases" (group protocols, e.g. classic, consumer, classic)
   * consume while a producer writes; for each next phase, one at a time, a
   * member with that protocol joins (and is given partitions) and one of the
   * previous phase leaves. Answers the group's type after each phase, every
   * record's delivery count, and the committed and end offsets.
   */
  static Object rollOver(Runner run, JsonNode op) throws Exception {
    int partitions = op.path("partitions").asInt();
    int n = op.path("members").asInt();
    String topic = op.path("topic").asText();
    String group = op.path("group").asText();
    Ownership ownership = new Ownership();
    Map<String, Integer> seen = new ConcurrentHashMap<>();
    AtomicBoolean measuring = new AtomicBoolean(true);
    Producing producer = new Producing(run, topic, partitions);
    List<Member> all = new ArrayList<>();
    List<Member> current = new ArrayList<>();
    List<String> types = new ArrayList<>();
    List<String> errors = new ArrayList<>();
    int phase = 0;
    try {
      for (JsonNode protocol : op.path("phases")) {
        List<Member> previous = current;
        current = new ArrayList<>();
        for (int i = 0; i < n; i++) {
          Member m = new Member(run, op, "p" + phase + "m" + i, protocol.asText(), ownership, seen, measuring);
          m.tolerateCommitFailures = true;
          all.add(m);
          current.add(m);
          m.thread.start();
          if (!Groups.await(() -> ownership.owned() == partitions && ownership.ownedBy(m.name) > 0, 30_000)) errors.add(m.name + " was given no partition");
          if (i < previous.size()) {
            Member old = previous.get(i);
            old.stop.set(true);
            old.thread.join(30_000);
          }
        }
        Groups.await(() -> ownership.owned() == partitions, 30_000);
        types.add(run.admin(op).listGroups().all().get().stream().filter(g -> g.groupId().equals(group)).findFirst().flatMap(g -> g.type()).map(Object::toString).orElse(null));
        phase++;
      }
      int total = producer.stop();
      Groups.await(() -> seen.size() >= total, 30_000);
      for (Member m : current) m.stop.set(true);
      for (Member m : current) m.thread.join(30_000);
      Map<String, Object> out = new LinkedHashMap<>();
      out.put("types", types);
      out.put("sent", total);
      out.put("distinct", seen.size());
      out.put("redelivered", seen.values().stream().filter(c -> c > 1).count());
      out.put("commitFailures", all.stream().mapToInt(m -> m.commitFailures.get()).sum());
      out.put("pausesMs", all.stream().map(m -> m.longestPause).toList());
      Map<Integer, Long> committedOffsets = new java.util.TreeMap<>();
      run.admin(op).listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get().forEach((tp, o) -> committedOffsets.put(tp.partition(), o.offset()));
      out.put("committed", committedOffsets);
      Map<org.apache.kafka.common.TopicPartition, org.apache.kafka.clients.admin.OffsetSpec> latest = new HashMap<>();
      for (int i = 0; i < partitions; i++) latest.put(new TopicPartition(topic, i), org.apache.kafka.clients.admin.OffsetSpec.latest());
      Map<Integer, Long> ends = new java.util.TreeMap<>();
      run.admin(op).listOffsets(latest).all().get().forEach((tp, o) -> ends.put(tp.partition(), o.offset()));
      out.put("ends", ends);
      errors.addAll(producer.errors);
      for (Member m : all) if (m.error != null) errors.add(m.name + ": " + m.error);
      out.put("errors", errors);
      return out;
    } finally {
      producer.stop();
      for (Member m : all) m.stop.set(true);
      for (Member m : all) m.thread.join(30_000);
    }
  }

  /**
   * Issue 17's third scenario: one consumer of group "group" (protocol
   * "groupProtocol") subscribed with "pattern" reads a record of the matching
   * topic "existing"; then topic "later" is created and a record written to
   * it. The result says whether (and how many ms after the topic's creation)
   * the consumer was assigned the new topic and read its record. "re2j": true
   * subscribes with a SubscriptionPattern, which the consumer protocol sends
   * to the broker to resolve; else with a java.util.regex.Pattern, which the
   * client matches against its metadata (refreshed every metadata.max.age.ms).
   */
  static Object regexSubscription(Runner run, JsonNode op) throws Exception {
    String existing = op.path("existing").asText();
    String later = op.path("later").asText();
    Properties p = run.props(op);
    p.put("group.id", op.path("group").asText());
    p.put("group.protocol", op.path("groupProtocol").asText());
    p.put("auto.offset.reset", "earliest");
    Map<String, Object> out = new LinkedHashMap<>();
    List<String> topicsAssigned = new ArrayList<>();
    Map<String, String> read = new LinkedHashMap<>();
    try (KafkaProducer<byte[], byte[]> producer = Records.producer(run.props(null)); KafkaConsumer<byte[], byte[]> consumer = Records.consumer(p)) {
      producer.send(new ProducerRecord<>(existing, 0, null, "first".getBytes(StandardCharsets.UTF_8))).get();
      ConsumerRebalanceListener listener = new ConsumerRebalanceListener() {
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> tps) {}

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> tps) {
          for (TopicPartition tp : tps) if (!topicsAssigned.contains(tp.topic())) topicsAssigned.add(tp.topic());
        }
      };
      if (op.path("re2j").asBoolean()) consumer.subscribe(new SubscriptionPattern(op.path("pattern").asText()), listener);
      else consumer.subscribe(Pattern.compile(op.path("pattern").asText()), listener);
      long deadline = System.currentTimeMillis() + 60_000;
      while (!read.containsKey(existing) && System.currentTimeMillis() < deadline) {
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) read.put(r.topic(), new String(r.value(), StandardCharsets.UTF_8));
      }
      out.put("readExisting", read.get(existing));
      Admin admin = run.admin(Runner.JSON.createObjectNode());
      admin.createTopics(List.of(new NewTopic(later, 1, (short) 1))).all().get();
      long createdAt = System.currentTimeMillis();
      producer.send(new ProducerRecord<>(later, 0, null, "later".getBytes(StandardCharsets.UTF_8))).get();
      long assignedAfter = -1;
      deadline = createdAt + op.path("waitMs").asLong(60_000);
      while (!read.containsKey(later) && System.currentTimeMillis() < deadline) {
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) read.put(r.topic(), new String(r.value(), StandardCharsets.UTF_8));
        if (assignedAfter < 0 && topicsAssigned.contains(later)) assignedAfter = System.currentTimeMillis() - createdAt;
      }
      out.put("readLater", read.get(later));
      out.put("assignedAfterMs", assignedAfter);
      out.put("readAfterMs", read.containsKey(later) ? System.currentTimeMillis() - createdAt : -1);
      out.put("topicsAssigned", topicsAssigned);
    }
    return out;
  }

  /** A SubscriptionPattern the broker refuses: what poll throws. */
  static Object invalidSubscriptionPattern(Runner run, JsonNode op) {
    Properties p = run.props(op);
    p.put("group.id", op.path("group").asText());
    p.put("group.protocol", "consumer");
    try (KafkaConsumer<byte[], byte[]> consumer = Records.consumer(p)) {
      consumer.subscribe(new SubscriptionPattern(op.path("pattern").asText()));
      long deadline = System.currentTimeMillis() + 30_000;
      while (System.currentTimeMillis() < deadline) consumer.poll(Duration.ofMillis(100));
      return Map.of("error", "none");
    } catch (Exception e) {
      return Map.of("error", Runner.describe(e));
    }
  }
}
