package dev.pgkafka.compat;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionReplica;
import org.apache.kafka.common.quota.ClientQuotaFilter;

/**
 * The Admin calls Admins.java leaves out: every group listing, member removal,
 * features, log dirs, elections, reassignments, client quotas, fencing
 * producers, and describeConfigs with synonyms. Results keep what the user
 * reads (names, states, sources), in sorted maps so two runs compare line by
 * line.
 */
final class ClusterAdmins {
  private ClusterAdmins() {}

  /** The first node describeCluster names, as a broker config resource is named. */
  static String selfId(Admin admin) throws Exception {
    return admin.describeCluster().nodes().get().iterator().next().idString();
  }

  private static List<String> sorted(java.util.Set<org.apache.kafka.common.acl.AclOperation> ops) {
    if (ops == null) return null;
    List<String> out = new ArrayList<>();
    for (var o : ops) out.add(o.toString());
    java.util.Collections.sort(out);
    return out;
  }

  private static boolean shows(Config config, JsonNode until) {
    for (var it = until.fields(); it.hasNext(); ) {
      var e = it.next();
      ConfigEntry entry = config.get(e.getKey());
      if (entry == null || !e.getValue().asText().equals(entry.value())) return false;
    }
    return true;
  }

  static Object call(Admin admin, String name, JsonNode op) throws Exception {
    switch (name) {
      case "listTopicsWithInternal":
        return new ArrayList<>(new java.util.TreeSet<>(admin.listTopics(new ListTopicsOptions().listInternal(true)).names().get()));
      case "describeConfigsWithSynonyms": {
        // "broker": true means the broker describeCluster names; "" the cluster-wide default resource.
        org.apache.kafka.common.config.ConfigResource r = op.has("broker")
            ? new org.apache.kafka.common.config.ConfigResource(org.apache.kafka.common.config.ConfigResource.Type.BROKER, op.get("broker").isBoolean() ? selfId(admin) : op.get("broker").asText())
            : new org.apache.kafka.common.config.ConfigResource(org.apache.kafka.common.config.ConfigResource.Type.TOPIC, op.path("topic").asText());
        Config config;
        try {
          config = admin.describeConfigs(List.of(r), new DescribeConfigsOptions().includeSynonyms(true)).all().get().get(r);
          // "until": {name: value}, read again (10 s at most) until the config shows it: a Kafka broker
          // applies a config change when it replays the metadata log, a moment after the answer.
          for (long end = System.currentTimeMillis() + 10_000; op.has("until") && !shows(config, op.get("until")) && System.currentTimeMillis() < end; ) {
            Thread.sleep(100);
            config = admin.describeConfigs(List.of(r), new DescribeConfigsOptions().includeSynonyms(true)).all().get().get(r);
          }
        } catch (Exception e) {
          return Map.of("error", Runner.describe(e));
        }
        List<String> names = Admins.strings(op.path("names"));
        Map<String, Object> out = new TreeMap<>();
        for (ConfigEntry e : config.entries()) {
          if (!names.isEmpty() && !names.contains(e.name())) continue;
          List<Object> synonyms = new ArrayList<>();
          for (ConfigEntry.ConfigSynonym s : e.synonyms()) synonyms.add(java.util.Arrays.asList(s.name(), s.value(), s.source().name()));
          Map<String, Object> m = new LinkedHashMap<>();
          m.put("value", e.value());
          m.put("source", e.source().name());
          m.put("readOnly", e.isReadOnly());
          m.put("sensitive", e.isSensitive());
          m.put("type", e.type().name());
          m.put("synonyms", synonyms);
          out.put(e.name(), m);
        }
        return out;
      }
      case "incrementalAlterBrokerConfigs": {
        org.apache.kafka.common.config.ConfigResource r = new org.apache.kafka.common.config.ConfigResource(
            org.apache.kafka.common.config.ConfigResource.Type.BROKER, op.path("broker").isBoolean() ? selfId(admin) : op.path("broker").asText());
        List<AlterConfigOp> ops = new ArrayList<>();
        for (JsonNode o : op.path("ops")) {
          String value = o.hasNonNull("value") ? o.get("value").asText() : null;
          ops.add(new AlterConfigOp(new ConfigEntry(o.path("name").asText(), value), AlterConfigOp.OpType.valueOf(o.path("type").asText("SET"))));
        }
        return Admins.outcome(admin.incrementalAlterConfigs(Map.of(r, ops), new AlterConfigsOptions().validateOnly(op.path("validateOnly").asBoolean(false))).all());
      }
      case "listGroups": {
        List<Object> out = new ArrayList<>();
        for (GroupListing g : admin.listGroups().all().get()) {
          out.add(Map.of("groupId", g.groupId(), "state", g.groupState().map(Object::toString).orElse(""), "type", g.type().map(Object::toString).orElse(""), "protocol", g.protocol()));
        }
        out.sort(java.util.Comparator.comparing(g -> String.valueOf(((Map<?, ?>) g).get("groupId"))));
        return out;
      }
      case "removeMembersFromConsumerGroup": {
        RemoveMembersFromConsumerGroupOptions o = op.has("instances")
            ? new RemoveMembersFromConsumerGroupOptions(Admins.strings(op.get("instances")).stream().map(MemberToRemove::new).toList())
            : new RemoveMembersFromConsumerGroupOptions();
        RemoveMembersFromConsumerGroupResult r = admin.removeMembersFromConsumerGroup(op.path("group").asText(), o);
        Map<String, Object> out = new TreeMap<>();
        out.put("all", Admins.outcome(r.all()));
        if (op.has("instances")) for (String i : Admins.strings(op.get("instances"))) out.put(i, Admins.outcome(r.memberResult(new MemberToRemove(i))));
        return out;
      }
      case "describeFeatures": {
        FeatureMetadata f = admin.describeFeatures().featureMetadata().get();
        Map<String, Object> finalized = new TreeMap<>();
        f.finalizedFeatures().forEach((k, v) -> finalized.put(k, List.of(v.minVersionLevel(), v.maxVersionLevel())));
        Map<String, Object> supported = new TreeMap<>();
        f.supportedFeatures().forEach((k, v) -> supported.put(k, List.of(v.minVersion(), v.maxVersion())));
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("finalized", finalized);
        out.put("supported", supported);
        out.put("hasFinalizedEpoch", f.finalizedFeaturesEpoch().isPresent());
        return out;
      }
      case "describeLogDirs": {
        // Only the partitions of the topics named: the internal topics differ between the brokers.
        Set<String> topics = new HashSet<>(Admins.strings(op.path("topics")));
        List<Integer> brokers = new ArrayList<>();
        for (org.apache.kafka.common.Node n : admin.describeCluster().nodes().get()) brokers.add(n.id());
        List<Object> out = new ArrayList<>();
        admin.describeLogDirs(brokers).allDescriptions().get().forEach((broker, dirs) -> dirs.forEach((path, d) -> {
          Map<String, Object> replicas = new TreeMap<>();
          d.replicaInfos().forEach((tp, info) -> {
            if (topics.contains(tp.topic())) replicas.put(tp.toString(), Map.of("hasSize", info.size() > 0, "offsetLag", info.offsetLag(), "isFuture", info.isFuture()));
          });
          Map<String, Object> m = new LinkedHashMap<>();
          m.put("error", d.error() == null ? null : d.error().getClass().getSimpleName());
          m.put("partitions", replicas);
          m.put("hasTotalBytes", d.totalBytes().isPresent());
          m.put("hasUsableBytes", d.usableBytes().isPresent());
          out.add(m);
        }));
        return out;
      }
      case "describeReplicaLogDirs": {
        String self = selfId(admin);
        List<TopicPartitionReplica> replicas = new ArrayList<>();
        for (TopicPartition tp : Records.partitions(op)) replicas.add(new TopicPartitionReplica(tp.topic(), tp.partition(), Integer.parseInt(self)));
        Map<String, Object> out = new TreeMap<>();
        admin.describeReplicaLogDirs(replicas).values().forEach((r, f) -> {
          try {
            DescribeReplicaLogDirsResult.ReplicaLogDirInfo i = f.get();
            out.put(r.topic() + "-" + r.partition(), Map.of("hasDir", i.getCurrentReplicaLogDir() != null, "futureDir", String.valueOf(i.getFutureReplicaLogDir())));
          } catch (Exception e) {
            out.put(r.topic() + "-" + r.partition(), Runner.describe(e));
          }
        });
        return out;
      }
      case "electLeaders": {
        ElectionType type = ElectionType.valueOf(op.path("type").asText("PREFERRED"));
        Map<String, Object> out = new TreeMap<>();
        try {
          admin.electLeaders(type, new HashSet<>(Records.partitions(op))).partitions().get().forEach((tp, e) -> out.put(tp.toString(), e.map(Runner::describe).orElse("ok")));
        } catch (Exception e) {
          out.put("error", Runner.describe(e));
        }
        return out;
      }
      case "listPartitionReassignments": {
        Map<String, Object> out = new TreeMap<>();
        var request = op.has("partitions") ? admin.listPartitionReassignments(new HashSet<>(Records.partitions(op))) : admin.listPartitionReassignments();
        request.reassignments().get().forEach((tp, r) -> out.put(tp.toString(), Map.of("replicas", r.replicas(), "adding", r.addingReplicas(), "removing", r.removingReplicas())));
        return out;
      }
      case "alterPartitionReassignments": {
        Map<TopicPartition, Optional<NewPartitionReassignment>> req = new java.util.HashMap<>();
        for (TopicPartition tp : Records.partitions(op)) req.put(tp, Optional.empty());
        return Admins.outcomes(admin.alterPartitionReassignments(req).values());
      }
      case "describeClientQuotas": {
        Map<String, Object> out = new TreeMap<>();
        admin.describeClientQuotas(ClientQuotaFilter.all()).entities().get().forEach((entity, quotas) -> out.put(entity.entries().toString(), new TreeMap<>(quotas)));
        return out;
      }
      case "authorizedOperations": {
        // What the requester may do, as describeCluster, describeTopics and describeConsumerGroups report it (sorted).
        Map<String, Object> out = new TreeMap<>();
        out.put("cluster", sorted(admin.describeCluster(new DescribeClusterOptions().includeAuthorizedOperations(true)).authorizedOperations().get()));
        admin.describeTopics(Admins.strings(op.path("topics")), new DescribeTopicsOptions().includeAuthorizedOperations(true)).allTopicNames().get()
            .forEach((t, d) -> out.put("topic " + t, sorted(d.authorizedOperations())));
        admin.describeConsumerGroups(Admins.strings(op.path("groups")), new DescribeConsumerGroupsOptions().includeAuthorizedOperations(true)).all().get()
            .forEach((g, d) -> out.put("group " + g, sorted(d.authorizedOperations())));
        return out;
      }
      case "fenceProducers":
        return Admins.outcomes(admin.fenceProducers(Admins.strings(op.path("ids"))).fencedProducers());
      case "describeTransactionsEach": {
        // Each id on its own: describeTransactions(...).all() fails as a whole on one unknown id.
        Map<String, Object> out = new TreeMap<>();
        for (String id : Admins.strings(op.path("ids"))) {
          try {
            TransactionDescription d = admin.describeTransactions(List.of(id)).description(id).get();
            // "settled": wait out a Prepare* state, which a broker completes asynchronously.
            for (long until = System.currentTimeMillis() + 10_000; op.path("settled").asBoolean() && d.state().toString().startsWith("Prepare") && System.currentTimeMillis() < until; ) {
              Thread.sleep(100);
              d = admin.describeTransactions(List.of(id)).description(id).get();
            }
            List<String> parts = new ArrayList<>();
            for (TopicPartition tp : d.topicPartitions()) parts.add(tp.toString());
            java.util.Collections.sort(parts);
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("state", d.state().toString());
            m.put("producerEpoch", d.producerEpoch());
            m.put("transactionTimeoutMs", d.transactionTimeoutMs());
            m.put("topicPartitions", parts);
            out.put(id, m);
          } catch (Exception e) {
            out.put(id, Runner.describe(e));
          }
        }
        return out;
      }
      default:
        throw new IllegalArgumentException("unknown op " + name);
    }
  }

  /**
   * A transactional producer that sends "records" to "topic" inside a
   * transaction and is closed without committing it: the transaction stays
   * open (Ongoing) until its timeout, for the transaction admin calls to see.
   */
  static Object openTransaction(Runner run, JsonNode op) throws Exception {
    Properties pp = run.props(op);
    pp.put("transactional.id", op.path("transactionalId").asText());
    pp.put("transaction.timeout.ms", op.path("timeoutMs").asText("60000"));
    KafkaProducer<byte[], byte[]> producer = Records.producer(pp);
    producer.initTransactions();
    producer.beginTransaction();
    List<Object> offsets = new ArrayList<>();
    for (JsonNode r : op.path("records")) offsets.add(producer.send(Records.record(op.path("topic").asText(), r)).get().offset());
    producer.close(Duration.ZERO);
    return Map.of("offsets", offsets);
  }
}
