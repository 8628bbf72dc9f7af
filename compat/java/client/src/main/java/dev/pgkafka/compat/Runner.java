package dev.pgkafka.compat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;

/**
 * Drives Apache Kafka's Java client for the compat tests. Reads one request
 * on stdin: {"bootstrap": "...", "config": {client properties for every
 * client}, "ops": [{"id": "...", "op": "...", ...}]}, runs the operations in
 * order, and prints {"<id>": result} on stdout. An operation that throws
 * gives {"error": "<exception>: <message>"} and the next one still runs, so
 * one JVM start serves a whole test file. Bytes are base64 in both
 * directions; a record's key or value may be null.
 */
public final class Runner {
  static final ObjectMapper JSON = new ObjectMapper();

  final String bootstrap;
  final Map<String, String> common = new LinkedHashMap<>();
  private Admin admin;

  Runner(JsonNode request) {
    bootstrap = request.path("bootstrap").asText();
    request.path("config").fields().forEachRemaining(e -> common.put(e.getKey(), e.getValue().asText()));
  }

  public static void main(String[] args) throws Exception {
    JsonNode request = JSON.readTree(System.in);
    Runner runner = new Runner(request);
    Map<String, Object> results = new LinkedHashMap<>();
    try {
      for (JsonNode op : request.path("ops")) {
        String id = op.path("id").asText(op.path("op").asText());
        Object result;
        try {
          result = runner.run(op);
        } catch (Throwable t) {
          result = Map.of("error", describe(t));
        }
        results.put(id, result);
      }
    } finally {
      runner.close();
    }
    JSON.writeValue(System.out, results);
    System.out.flush();
    // Client threads (e.g. a producer's sender) must not keep the JVM alive.
    System.exit(0);
  }

  Object run(JsonNode op) throws Exception {
    String name = op.path("op").asText();
    switch (name) {
      case "produce": return Records.produce(this, op);
      case "produceMany": return Records.produceMany(this, op);
      case "consume": return Records.consume(this, op);
      case "offsets": return Records.offsets(this, op);
      case "groupRebalance": return Groups.rebalance(this, op);
      case "autoCommit": return Groups.autoCommit(this, op);
      case "staticMembership": return Groups.staticMembership(this, op);
      case "staticJoin": return Groups.staticJoin(this, op);
      case "openTransaction": return ClusterAdmins.openTransaction(this, op);
      case "joinOneAtATime": return Kip848.joinOneAtATime(this, op);
      case "rollOver": return Kip848.rollOver(this, op);
      case "regexSubscription": return Kip848.regexSubscription(this, op);
      case "invalidSubscriptionPattern": return Kip848.invalidSubscriptionPattern(this, op);
      case "transactions": return Txns.readProcessWrite(this, op);
      case "latency": return Latency.run(this, op);
      default: return Admins.run(this, name, op);
    }
  }

  /** The client properties: bootstrap, the request's common config, then the operation's own "config". */
  Properties props(JsonNode op) {
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    p.putAll(common);
    if (op != null) {
      Iterator<Map.Entry<String, JsonNode>> it = op.path("config").fields();
      while (it.hasNext()) {
        Map.Entry<String, JsonNode> e = it.next();
        p.put(e.getKey(), e.getValue().asText());
      }
    }
    return p;
  }

  /** One Admin for the run, unless the operation brings its own config (another user, say). */
  Admin admin(JsonNode op) {
    if (op.has("config")) return null;
    if (admin == null) admin = Admin.create(props(null));
    return admin;
  }

  void close() {
    if (admin != null) admin.close();
  }

  /** The exception's class and message, down to its root cause: what the user sees when the client throws. */
  static String describe(Throwable t) {
    Throwable root = t;
    while ((root instanceof java.util.concurrent.ExecutionException || root instanceof java.util.concurrent.CompletionException) && root.getCause() != null) root = root.getCause();
    String s = root.getClass().getSimpleName() + ": " + root.getMessage();
    if (System.getenv("COMPAT_JAVA_TRACE") != null) {
      StringWriter w = new StringWriter();
      t.printStackTrace(new PrintWriter(w));
      System.err.println(w);
    }
    return s;
  }

  static byte[] bytes(JsonNode n) {
    return n == null || n.isNull() || n.isMissingNode() ? null : java.util.Base64.getDecoder().decode(n.asText());
  }

  static String b64(byte[] b) {
    return b == null ? null : java.util.Base64.getEncoder().encodeToString(b);
  }
}
