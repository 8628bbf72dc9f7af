package dev.pgkafka.compat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;

/** The Admin API: one operation per Admin method, each answer as the user reads it (values, or the exception per item). */
final class Admins {
  private Admins() {}

  static Object run(Runner run, String name, JsonNode op) throws Exception {
    Admin shared = run.admin(op);
    Admin admin = shared != null ? shared : Admin.create(run.props(op));
    try {
      return call(admin, name, op);
    } finally {
      if (shared == null) admin.close();
    }
  }

  /** "ok", or the exception the item's future failed with. */
  static Object outcome(KafkaFuture<?> f) {
    try {
      f.get();
      return "ok";
    } catch (Exception e) {
      return Runner.describe(e);
    }
  }

  static <K> Map<String, Object> outcomes(Map<K, ? extends KafkaFuture<?>> futures) {
    Map<String, Object> out = new TreeMap<>();
    futures.forEach((k, f) -> out.put(String.valueOf(k), outcome(f)));
    return out;
  }

  static List<String> strings(JsonNode n) {
    List<String> out = new ArrayList<>();
    for (JsonNode s : n) out.add(s.asText());
    return out;
  }

  static ConfigResource resource(JsonNode op) {
    if (op.has("broker")) return new ConfigResource(ConfigResource.Type.BROKER, op.get("broker").asText());
    return new ConfigResource(ConfigResource.Type.TOPIC, op.path("topic").asText());
  }

  static Object call(Admin admin, String name, JsonNode op) throws Exception {
    switch (name) {
      case "createTopics": {
        List<NewTopic> topics = new ArrayList<>();
        for (JsonNode t : op.path("topics")) {
          NewTopic nt = new NewTopic(t.path("name").asText(), Optional.of(t.path("partitions").asInt(1)), Optional.empty());
          Map<String, String> configs = new HashMap<>();
          t.path("configs").fields().forEachRemaining(e -> configs.put(e.getKey(), e.getValue().asText()));
          topics.add(nt.configs(configs));
        }
        return outcomes(admin.createTopics(topics, new CreateTopicsOptions().validateOnly(op.path("validateOnly").asBoolean(false))).values());
      }
      case "listTopics": {
        return new ArrayList<>(new java.util.TreeSet<>(admin.listTopics().names().get()));
      }
      case "describeTopics": {
        Map<String, Object> out = new TreeMap<>();
        admin.describeTopics(strings(op.path("topics"))).topicNameValues().forEach((topic, f) -> {
          try {
            TopicDescription d = f.get();
            List<Object> parts = new ArrayList<>();
            for (TopicPartitionInfo p : d.partitions()) {
              parts.add(Map.of("partition", p.partition(), "leader", p.leader() == null ? -1 : p.leader().id(), "replicas", ids(p.replicas()), "isr", ids(p.isr())));
            }
            out.put(topic, Map.of("internal", d.isInternal(), "hasTopicId", d.topicId() != null && !d.topicId().toString().equals("AAAAAAAAAAAAAAAAAAAAAA"), "partitions", parts));
          } catch (Exception e) {
            out.put(topic, Map.of("error", Runner.describe(e)));
          }
        });
        return out;
      }
      case "deleteTopics":
        return outcomes(admin.deleteTopics(strings(op.path("topics"))).topicNameValues());
      case "describeConfigs": {
        ConfigResource r = resource(op);
        Config config = admin.describeConfigs(List.of(r)).all().get().get(r);
        List<String> names = strings(op.path("names"));
        Map<String, Object> out = new TreeMap<>();
        for (ConfigEntry e : config.entries()) {
          if (!names.isEmpty() && !names.contains(e.name())) continue;
          Map<String, Object> m = new LinkedHashMap<>();
          m.put("value", e.value());
          m.put("source", e.source().name());
          m.put("readOnly", e.isReadOnly());
          m.put("sensitive", e.isSensitive());
          out.put(e.name(), m);
        }
        return out;
      }
      case "incrementalAlterConfigs": {
        ConfigResource r = resource(op);
        List<AlterConfigOp> ops = new ArrayList<>();
        for (JsonNode o : op.path("ops")) {
          String value = o.hasNonNull("value") ? o.get("value").asText() : null;
          ops.add(new AlterConfigOp(new ConfigEntry(o.path("name").asText(), value), AlterConfigOp.OpType.valueOf(o.path("type").asText("SET"))));
        }
        return outcome(admin.incrementalAlterConfigs(Map.of(r, ops)).all());
      }
      case "createPartitions":
        return outcome(admin.createPartitions(Map.of(op.path("topic").asText(), NewPartitions.increaseTo(op.path("total").asInt()))).all());
      case "deleteRecords": {
        Map<TopicPartition, RecordsToDelete> req = new HashMap<>();
        op.path("offsets").fields().forEachRemaining(e -> req.put(new TopicPartition(op.path("topic").asText(), Integer.parseInt(e.getKey())), RecordsToDelete.beforeOffset(e.getValue().asLong())));
        Map<String, Object> out = new TreeMap<>();
        admin.deleteRecords(req).lowWatermarks().forEach((tp, f) -> {
          try {
            out.put(String.valueOf(tp.partition()), f.get().lowWatermark());
          } catch (Exception e) {
            out.put(String.valueOf(tp.partition()), Runner.describe(e));
          }
        });
        return out;
      }
      case "describeCluster": {
        DescribeClusterResult r = admin.describeCluster();
        List<Object> nodes = new ArrayList<>();
        for (Node n : r.nodes().get()) nodes.add(Map.of("id", n.id(), "host", n.host(), "port", n.port()));
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("clusterId", r.clusterId().get());
        out.put("controller", r.controller().get().id());
        out.put("nodes", nodes);
        return out;
      }
      case "listConsumerGroups": {
        List<Object> out = new ArrayList<>();
        for (GroupListing g : admin.listGroups(ListGroupsOptions.forConsumerGroups()).all().get()) {
          out.add(Map.of("groupId", g.groupId(), "state", g.groupState().map(Object::toString).orElse(""), "type", g.type().map(Object::toString).orElse(""), "protocol", g.protocol()));
        }
        return out;
      }
      case "describeConsumerGroups": {
        Map<String, Object> out = new TreeMap<>();
        admin.describeConsumerGroups(strings(op.path("groups"))).describedGroups().forEach((g, f) -> {
          try {
            ConsumerGroupDescription d = f.get();
            List<Object> members = new ArrayList<>();
            for (MemberDescription m : d.members()) {
              List<String> assigned = new ArrayList<>();
              for (TopicPartition tp : m.assignment().topicPartitions()) assigned.add(tp.toString());
              java.util.Collections.sort(assigned);
              members.add(Map.of("clientId", m.clientId(), "groupInstanceId", m.groupInstanceId().orElse(""), "assignment", assigned));
            }
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("state", d.groupState().toString());
            m.put("type", d.type().toString());
            m.put("assignor", d.partitionAssignor());
            m.put("coordinator", d.coordinator().id());
            m.put("members", members);
            out.put(g, m);
          } catch (Exception e) {
            out.put(g, Map.of("error", Runner.describe(e)));
          }
        });
        return out;
      }
      case "deleteConsumerGroups":
        return outcomes(admin.deleteConsumerGroups(strings(op.path("groups"))).deletedGroups());
      case "listConsumerGroupOffsets": {
        Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(op.path("group").asText()).partitionsToOffsetAndMetadata().get();
        Map<String, Object> out = new TreeMap<>();
        offsets.forEach((tp, o) -> out.put(tp.toString(), o == null ? null : Map.of("offset", o.offset(), "metadata", o.metadata())));
        return out;
      }
      case "alterConsumerGroupOffsets": {
        Map<TopicPartition, OffsetAndMetadata> req = new HashMap<>();
        op.path("offsets").fields().forEachRemaining(e -> req.put(new TopicPartition(op.path("topic").asText(), Integer.parseInt(e.getKey())), new OffsetAndMetadata(e.getValue().asLong())));
        return outcome(admin.alterConsumerGroupOffsets(op.path("group").asText(), req).all());
      }
      case "createAcls": {
        List<AclBinding> acls = new ArrayList<>();
        for (JsonNode a : op.path("acls")) acls.add(binding(a));
        return outcome(admin.createAcls(acls).all());
      }
      case "describeAcls": {
        List<Object> out = new ArrayList<>();
        for (AclBinding b : admin.describeAcls(op.has("filter") ? filter(op.get("filter")) : AclBindingFilter.ANY).values().get()) out.add(json(b));
        out.sort((a, b) -> a.toString().compareTo(b.toString()));
        return out;
      }
      case "deleteAcls": {
        List<AclBindingFilter> filters = new ArrayList<>();
        for (JsonNode f : op.path("filters")) filters.add(filter(f));
        List<Object> out = new ArrayList<>();
        for (AclBinding b : admin.deleteAcls(filters).all().get()) out.add(json(b));
        out.sort((a, b) -> a.toString().compareTo(b.toString()));
        return out;
      }
      case "describeUserScramCredentials": {
        DescribeUserScramCredentialsResult r = op.has("users") ? admin.describeUserScramCredentials(strings(op.get("users"))) : admin.describeUserScramCredentials();
        Map<String, Object> out = new TreeMap<>();
        for (String user : op.has("users") ? strings(op.get("users")) : r.users().get()) {
          try {
            List<Object> creds = new ArrayList<>();
            for (ScramCredentialInfo i : r.description(user).get().credentialInfos()) creds.add(Map.of("mechanism", i.mechanism().mechanismName(), "iterations", i.iterations()));
            // Kafka lists a user's mechanisms in the order of a hash map: sorted here.
            creds.sort(java.util.Comparator.comparing(c -> String.valueOf(((Map<?, ?>) c).get("mechanism"))));
            out.put(user, creds);
          } catch (Exception e) {
            out.put(user, Runner.describe(e));
          }
        }
        return out;
      }
      case "alterUserScramCredentials": {
        List<UserScramCredentialAlteration> alterations = new ArrayList<>();
        for (JsonNode u : op.path("upserts")) {
          ScramMechanism m = ScramMechanism.fromMechanismName(u.path("mechanism").asText());
          alterations.add(new UserScramCredentialUpsertion(u.path("user").asText(), new ScramCredentialInfo(m, u.path("iterations").asInt(4096)), u.path("password").asText()));
        }
        for (JsonNode u : op.path("deletions")) alterations.add(new UserScramCredentialDeletion(u.path("user").asText(), ScramMechanism.fromMechanismName(u.path("mechanism").asText())));
        return outcomes(admin.alterUserScramCredentials(alterations).values());
      }
      case "listTransactions": {
        List<Object> out = new ArrayList<>();
        for (TransactionListing t : admin.listTransactions().all().get()) out.add(Map.of("transactionalId", t.transactionalId(), "producerId", t.producerId(), "state", t.state().toString()));
        return out;
      }
      case "describeTransactions": {
        Map<String, Object> out = new TreeMap<>();
        admin.describeTransactions(strings(op.path("ids"))).all().get().forEach((id, d) -> {
          List<String> parts = new ArrayList<>();
          for (TopicPartition tp : d.topicPartitions()) parts.add(tp.toString());
          out.put(id, Map.of("state", d.state().toString(), "producerId", d.producerId(), "producerEpoch", d.producerEpoch(), "coordinatorId", d.coordinatorId(), "topicPartitions", parts));
        });
        return out;
      }
      case "listOffsets": {
        // "specs": {name: "earliest" | "latest" | "maxTimestamp" | <timestamp>}, asked for every partition.
        Map<String, Object> out = new TreeMap<>();
        var it = op.path("specs").fields();
        while (it.hasNext()) {
          var e = it.next();
          String spec = e.getValue().asText();
          OffsetSpec s = spec.equals("earliest") ? OffsetSpec.earliest() : spec.equals("latest") ? OffsetSpec.latest() : spec.equals("maxTimestamp") ? OffsetSpec.maxTimestamp() : OffsetSpec.forTimestamp(Long.parseLong(spec));
          Map<TopicPartition, OffsetSpec> req = new HashMap<>();
          for (TopicPartition tp : Records.partitions(op)) req.put(tp, s);
          // "isolation": "read_committed" reads up to the last stable offset.
          org.apache.kafka.common.IsolationLevel isolation = op.path("isolation").asText("").equals("read_committed") ? org.apache.kafka.common.IsolationLevel.READ_COMMITTED : org.apache.kafka.common.IsolationLevel.READ_UNCOMMITTED;
          Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> got = admin.listOffsets(req, new ListOffsetsOptions(isolation)).all().get();
          List<Object> row = new ArrayList<>();
          for (TopicPartition tp : Records.partitions(op)) row.add(Map.of("offset", got.get(tp).offset(), "timestamp", got.get(tp).timestamp()));
          out.put(e.getKey(), row);
        }
        return out;
      }
      case "describeProducers": {
        Map<String, Object> out = new TreeMap<>();
        admin.describeProducers(Records.partitions(op)).all().get().forEach((tp, state) -> {
          List<Object> producers = new ArrayList<>();
          for (ProducerState p : state.activeProducers()) {
            producers.add(Map.of("producerId", p.producerId(), "producerEpoch", p.producerEpoch(), "lastSequence", p.lastSequence(), "currentTransactionStartOffset", p.currentTransactionStartOffset().orElse(-1L)));
          }
          out.put(tp.toString(), producers);
        });
        return out;
      }
      case "deleteConsumerGroupOffsets": {
        java.util.Set<TopicPartition> tps = new java.util.HashSet<>(Records.partitions(op));
        return outcome(admin.deleteConsumerGroupOffsets(op.path("group").asText(), tps).all());
      }
      default:
        return ClusterAdmins.call(admin, name, op);
    }
  }

  private static List<Integer> ids(Collection<Node> nodes) {
    List<Integer> out = new ArrayList<>();
    for (Node n : nodes) out.add(n.id());
    return out;
  }

  static AclBinding binding(JsonNode a) {
    return new AclBinding(
        new ResourcePattern(ResourceType.fromString(a.path("resourceType").asText()), a.path("name").asText(), PatternType.fromString(a.path("patternType").asText("LITERAL"))),
        new AccessControlEntry(a.path("principal").asText(), a.path("host").asText("*"), AclOperation.fromString(a.path("operation").asText()), AclPermissionType.fromString(a.path("permission").asText("ALLOW"))));
  }

  /** A filter: each field absent means ANY. */
  static AclBindingFilter filter(JsonNode f) {
    return new AclBindingFilter(
        new ResourcePatternFilter(ResourceType.fromString(f.path("resourceType").asText("ANY")), f.hasNonNull("name") ? f.get("name").asText() : null, PatternType.fromString(f.path("patternType").asText("ANY"))),
        new AccessControlEntryFilter(f.hasNonNull("principal") ? f.get("principal").asText() : null, f.hasNonNull("host") ? f.get("host").asText() : null, AclOperation.fromString(f.path("operation").asText("ANY")), AclPermissionType.fromString(f.path("permission").asText("ANY"))));
  }

  static Map<String, Object> json(AclBinding b) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("resourceType", b.pattern().resourceType().toString());
    m.put("name", b.pattern().name());
    m.put("patternType", b.pattern().patternType().toString());
    m.put("principal", b.entry().principal());
    m.put("host", b.entry().host());
    m.put("operation", b.entry().operation().toString());
    m.put("permission", b.entry().permissionType().toString());
    return m;
  }
}
