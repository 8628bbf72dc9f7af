package dev.pgkafka.compat;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

/** Classic consumer groups: members that subscribe and poll in their own threads, as an application's would. */
final class Groups {
  private Groups() {}

  /** One group member polling on its own thread; what it saw is read from other threads. */
  static final class Member implements Runnable {
    final String name;
    final KafkaConsumer<byte[], byte[]> consumer;
    final String topic;
    final AtomicBoolean stop = new AtomicBoolean();
    final List<Object> events = new ArrayList<>();
    volatile Set<Integer> assignment = Set.of();
    volatile int generation = -1;
    volatile int consumed = 0;
    volatile String error;
    volatile String committed;
    final Thread thread;
    /** With enable.auto.commit the consumer commits by itself (every auto.commit.interval.ms and on close). */
    final boolean autoCommit;

    Member(Runner run, JsonNode op, String name, Map<String, String> extra) {
      this.name = name;
      this.topic = op.path("topic").asText();
      Properties p = run.props(op);
      p.put("group.id", op.path("group").asText());
      p.put("group.protocol", op.path("groupProtocol").asText("classic"));
      p.put("client.id", name);
      p.put("auto.offset.reset", "earliest");
      p.put("enable.auto.commit", "false");
      p.putAll(extra);
      autoCommit = Boolean.parseBoolean(p.getProperty("enable.auto.commit"));
      consumer = Records.consumer(p);
      thread = new Thread(this, name);
    }

    Member start() {
      thread.start();
      return this;
    }

    private static List<Integer> numbers(Collection<TopicPartition> tps) {
      return new ArrayList<>(new TreeSet<>(tps.stream().map(TopicPartition::partition).toList()));
    }

    @Override
    public void run() {
      try {
        consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
          @Override
          public void onPartitionsRevoked(Collection<TopicPartition> tps) {
            synchronized (events) {
              events.add(Map.of("revoked", numbers(tps)));
            }
          }

          @Override
          public void onPartitionsAssigned(Collection<TopicPartition> tps) {
            synchronized (events) {
              events.add(Map.of("assigned", numbers(tps)));
            }
          }
        });
        while (!stop.get()) {
          int n = consumer.poll(Duration.ofMillis(100)).count();
          // At-least-once: commit what each poll returned before the next one.
          if (n > 0 && !autoCommit) consumer.commitSync(Duration.ofSeconds(10));
          consumed += n;
          assignment = new TreeSet<>(numbers(consumer.assignment()));
          generation = consumer.groupMetadata().generationId();
        }
        if (!autoCommit) consumer.commitSync(Duration.ofSeconds(10));
        committed = "ok";
      } catch (Exception e) {
        error = Runner.describe(e);
      } finally {
        consumer.close(org.apache.kafka.clients.consumer.CloseOptions.timeout(Duration.ofSeconds(10)));
      }
    }

    void finish() throws InterruptedException {
      stop.set(true);
      thread.join(30_000);
    }

    Map<String, Object> report() {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("assignment", new ArrayList<>(assignment));
      m.put("generation", generation);
      m.put("consumed", consumed);
      synchronized (events) {
        m.put("events", new ArrayList<>(events));
      }
      m.put("committed", committed);
      m.put("error", error);
      return m;
    }
  }

  static boolean await(BooleanSupplier done, long ms) throws InterruptedException {
    long deadline = System.currentTimeMillis() + ms;
    while (System.currentTimeMillis() < deadline) {
      if (done.getAsBoolean()) return true;
      Thread.sleep(50);
    }
    return done.getAsBoolean();
  }

  /** The members' assignments are non-empty, disjoint and cover partitions 0..n-1, all in the same generation. */
  static boolean split(int n, Member... members) {
    Set<Integer> all = new HashSet<>();
    int total = 0;
    for (Member m : members) {
      Set<Integer> a = m.assignment;
      if (a.isEmpty() || m.generation != members[0].generation) return false;
      all.addAll(a);
      total += a.size();
    }
    return total == n && all.size() == n;
  }

  /**
   * A member subscribes alone and consumes "expect" records; a second one
   * joins; both poll until the partitions are split between them. "assignor"
   * picks partition.assignment.strategy (e.g. CooperativeStickyAssignor).
   */
  static Object rebalance(Runner run, JsonNode op) throws Exception {
    int n = op.path("partitions").asInt();
    Map<String, String> extra = new LinkedHashMap<>();
    if (op.has("assignor")) extra.put("partition.assignment.strategy", op.get("assignor").asText());
    Member a = new Member(run, op, "member-a", extra).start();
    boolean alone = await(() -> a.assignment.size() == n && a.consumed >= op.path("expect").asInt() || a.error != null, 30_000) && a.error == null;
    Map<String, Object> first = a.report();
    Member b = new Member(run, op, "member-b", extra).start();
    boolean shared = await(() -> split(n, a, b) || a.error != null || b.error != null, 30_000) && a.error == null && b.error == null;
    // What each member saw once the partitions were split, before stopping them revokes everything.
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("alone", alone);
    out.put("first", first);
    out.put("shared", shared);
    out.put("a", a.report());
    out.put("b", b.report());
    a.finish();
    b.finish();
    out.put("end", Map.of("a", a.report(), "b", b.report()));
    return out;
  }

  /**
   * The consumer's defaults (enable.auto.commit=true): one member reads
   * "expect" records and is closed, which commits; the next member of the
   * group resumes after them and reads nothing.
   */
  static Object autoCommit(Runner run, JsonNode op) throws Exception {
    int n = op.path("partitions").asInt();
    Map<String, String> defaults = Map.of("enable.auto.commit", "true");
    Member first = new Member(run, op, "auto-1", defaults).start();
    boolean read = await(() -> first.consumed >= op.path("expect").asInt() || first.error != null, 30_000) && first.error == null;
    first.finish();
    Member next = new Member(run, op, "auto-2", defaults).start();
    boolean assigned = await(() -> next.assignment.size() == n || next.error != null, 30_000) && next.error == null;
    if (assigned) Thread.sleep(op.path("settleMs").asLong(1000));
    next.finish();
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("read", read);
    out.put("first", first.report());
    out.put("assigned", assigned);
    out.put("next", next.report());
    return out;
  }

  /**
   * Two static members (group.instance.id) split the partitions; one is
   * closed (a static member does not leave the group) and a new consumer
   * with the same instance id takes its place while the other keeps polling.
   */
  static Object staticMembership(Runner run, JsonNode op) throws Exception {
    int n = op.path("partitions").asInt();
    Member one = new Member(run, op, "static-1", Map.of("group.instance.id", "instance-1")).start();
    Member two = new Member(run, op, "static-2", Map.of("group.instance.id", "instance-2")).start();
    boolean shared = await(() -> split(n, one, two) || one.error != null || two.error != null, 30_000) && one.error == null && two.error == null;
    Map<String, Object> before = Map.of("one", one.report(), "two", two.report());
    one.finish();
    Member again = new Member(run, op, "static-1-again", Map.of("group.instance.id", "instance-1")).start();
    boolean back = await(() -> split(n, again, two) || again.error != null || two.error != null, 30_000) && again.error == null && two.error == null;
    // Let the other member poll on: a rebalance caused by the restart would show in its events.
    Thread.sleep(op.path("settleMs").asLong(1500));
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("shared", shared);
    out.put("before", before);
    out.put("back", back);
    out.put("again", again.report());
    out.put("two", two.report());
    again.finish();
    two.finish();
    return out;
  }

  /**
   * One static member (group.instance.id "instance") joins, reads "expect"
   * records, commits and is closed: a static member does not leave, so the
   * group stays Stable with it as member until its session times out or an
   * admin removes it.
   */
  static Object staticJoin(Runner run, JsonNode op) throws Exception {
    Member m = new Member(run, op, "static-join", Map.of("group.instance.id", op.path("instance").asText(), "session.timeout.ms", "60000")).start();
    boolean read = await(() -> m.consumed >= op.path("expect").asInt() || m.error != null, 30_000) && m.error == null;
    m.finish();
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("read", read);
    out.put("member", m.report());
    return out;
  }
}
