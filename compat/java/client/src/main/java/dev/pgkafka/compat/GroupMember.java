package dev.pgkafka.compat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * One group member in a JVM of its own, so a test can SIGKILL it: the events
 * of compat/groups/groups_driver.py as JSON lines on stdout (assign and revoke
 * with the partitions owned after them, msg, commit with the offsets
 * committed, stall, done) for the request given as the first argument
 * ({bootstrap, topic, group, name, group_protocol, commit_every, stall_after,
 * process_ms, max_s}). Commits after processing ("commit_every" records, and
 * when partitions are revoked); "stop" on stdin closes it cleanly.
 */
public final class GroupMember {
  private GroupMember() {}

  private static synchronized void emit(Map<String, Object> ev) {
    try {
      System.out.println(Runner.JSON.writeValueAsString(ev));
      System.out.flush();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static Map<String, Object> ev(String name, Object... kv) {
    Map<String, Object> ev = new LinkedHashMap<>();
    ev.put("ev", name);
    for (int i = 0; i < kv.length; i += 2) ev.put((String) kv[i], kv[i + 1]);
    return ev;
  }

  public static void main(String[] args) throws Exception {
    JsonNode req = Runner.JSON.readTree(args[0]);
    String topic = req.path("topic").asText();
    int commitEvery = req.path("commit_every").asInt(1);
    int stallAfter = req.path("stall_after").asInt(0);
    long processMs = req.path("process_ms").asLong(0);
    AtomicBoolean stop = new AtomicBoolean();
    Thread stdin = new Thread(() -> {
      try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
        for (String line; (line = in.readLine()) != null; ) if (line.trim().equals("stop")) break;
      } catch (Exception e) {
        // stdin closed: stop as well
      }
      stop.set(true);
    }, "stdin");
    stdin.setDaemon(true);
    stdin.start();

    Properties p = new Properties();
    p.put("bootstrap.servers", req.path("bootstrap").asText());
    p.put("group.id", req.path("group").asText());
    p.put("group.protocol", req.path("group_protocol").asText("consumer"));
    p.put("client.id", req.path("name").asText("member"));
    p.put("auto.offset.reset", req.path("reset").asText("earliest"));
    p.put("enable.auto.commit", "false");
    // Processed but not yet committed: partition → the next offset to commit.
    Map<Integer, Long> pending = new TreeMap<>();
    try (KafkaConsumer<byte[], byte[]> consumer = Records.consumer(p)) {
      Runnable commit = () -> {
        if (pending.isEmpty()) return;
        Map<TopicPartition, OffsetAndMetadata> offsets = new LinkedHashMap<>();
        List<List<Long>> committed = new ArrayList<>();
        pending.forEach((part, o) -> {
          offsets.put(new TopicPartition(topic, part), new OffsetAndMetadata(o));
          committed.add(List.of((long) part, o));
        });
        consumer.commitSync(offsets, Duration.ofSeconds(10));
        pending.clear();
        emit(ev("commit", "offsets", committed));
      };
      consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
        private List<Integer> owned() {
          return consumer.assignment().stream().map(TopicPartition::partition).sorted().toList();
        }

        private List<Integer> parts(Collection<TopicPartition> tps) {
          return tps.stream().map(TopicPartition::partition).sorted().toList();
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> tps) {
          // What was processed is committed before the partitions go, so their next owner starts after it.
          commit.run();
          List<Integer> revoked = parts(tps);
          emit(ev("revoke", "partitions", revoked, "owned", owned().stream().filter(x -> !revoked.contains(x)).toList()));
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> tps) {
          emit(ev("assign", "partitions", parts(tps), "owned", owned()));
        }
      });
      int processed = 0;
      long deadline = System.currentTimeMillis() + req.path("max_s").asLong(40) * 1000;
      while (!stop.get() && System.currentTimeMillis() < deadline) {
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
          if (processMs > 0) Thread.sleep(processMs);
          String key = r.key() == null ? null : new String(r.key(), StandardCharsets.UTF_8);
          emit(ev("msg", "p", r.partition(), "o", r.offset(), "k", key));
          pending.put(r.partition(), r.offset() + 1);
          processed++;
          if (processed % commitEvery == 0) commit.run();
          if (processed == stallAfter) {
            // Processed records the member has not committed, and it stops here: what a crash mid-batch leaves.
            emit(ev("stall"));
            while (!stop.get()) Thread.sleep(100);
            break;
          }
        }
      }
      commit.run();
      consumer.close(CloseOptions.timeout(Duration.ofSeconds(10)));
    }
    emit(ev("done"));
    System.exit(0);
  }
}
