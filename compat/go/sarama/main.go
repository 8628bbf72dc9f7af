// IBM/sarama driven by compat/go-sarama.test.ts: reads a JSON scenario on
// stdin (see internal/runner) and prints JSON results. SARAMA_VERSION picks
// config.Version (the Kafka version sarama assumes, e.g. 4.3.1); unset, it is
// sarama's default.
package main

import (
	"context"
	"errors"
	"os"
	"sort"
	"time"

	"github.com/IBM/sarama"

	"pgkafka/compat/go/internal/runner"
)

func main() {
	runner.Main(map[string]runner.Op{
		"create":         runner.Typed(create),
		"list":           runner.Typed(list),
		"delete":         runner.Typed(deleteTopics),
		"produce":        runner.Typed(produce),
		"fetch":          runner.Typed(fetch),
		"offsets":        runner.Typed(offsets),
		"group_consume":  runner.Typed(groupConsume),
		"rebalance":      runner.Typed(rebalance),
		"configs":        runner.Typed(configs),
		"partitions":     runner.Typed(partitions),
		"groups":         runner.Typed(groups),
		"delete_records": runner.Typed(deleteRecords),
		"acls":           runner.Typed(acls),
		"cluster":        runner.Typed(cluster),
		"transaction":    runner.Typed(transaction),
		"transform":      runner.Typed(transform),
		"delete_groups":  runner.Typed(deleteGroups),
		"login":          runner.Typed(login),
	})
}

func config() *sarama.Config {
	c := sarama.NewConfig()
	c.ClientID = "compat-sarama"
	if v := os.Getenv("SARAMA_VERSION"); v != "" {
		version, err := sarama.ParseKafkaVersion(v)
		if err != nil {
			panic(err)
		}
		c.Version = version
	}
	c.Metadata.Retry.Backoff = 100 * time.Millisecond
	c.Producer.RequiredAcks = sarama.WaitForAll
	c.Producer.Return.Successes = true
	c.Producer.Partitioner = sarama.NewManualPartitioner
	c.Producer.Flush.Frequency = 20 * time.Millisecond
	c.Consumer.Return.Errors = true
	c.Consumer.Offsets.Initial = sarama.OffsetOldest
	c.Consumer.MaxWaitTime = 300 * time.Millisecond
	c.Consumer.Group.Rebalance.Retry.Backoff = 200 * time.Millisecond
	applySecurity(c)
	return c
}

func admin(bootstrap string) (sarama.ClusterAdmin, error) {
	return sarama.NewClusterAdmin([]string{bootstrap}, config())
}

// code is the Kafka error code of err (0 for nil, -1 for an error that is not Kafka's).
func code(err error) int16 {
	if err == nil {
		return 0
	}
	var ke sarama.KError
	if errors.As(err, &ke) {
		return int16(ke)
	}
	var te *sarama.TopicError
	if errors.As(err, &te) {
		return int16(te.Err)
	}
	var pe *sarama.TopicPartitionError
	if errors.As(err, &pe) {
		return int16(pe.Err)
	}
	return -1
}

type topicSpec struct {
	Name       string            `json:"name"`
	Partitions int32             `json:"partitions"`
	Configs    map[string]string `json:"configs"`
}

func create(_ context.Context, bootstrap string, a struct{ Topics []topicSpec }) (any, error) {
	ca, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer ca.Close()
	out := [][2]any{}
	for _, t := range a.Topics {
		cfg := map[string]*string{}
		for k, v := range t.Configs {
			cfg[k] = &v
		}
		err := ca.CreateTopic(t.Name, &sarama.TopicDetail{NumPartitions: t.Partitions, ReplicationFactor: 1, ConfigEntries: cfg}, false)
		if err != nil && code(err) == -1 {
			return nil, err
		}
		out = append(out, [2]any{t.Name, code(err)})
	}
	return map[string]any{"errors": out}, nil
}

func list(_ context.Context, bootstrap string, a struct{ Describe []string }) (any, error) {
	ca, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer ca.Close()
	all, err := ca.ListTopics()
	if err != nil {
		return nil, err
	}
	names := []string{}
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := map[string][]int32{}
	leaders := map[string][]int32{}
	if len(a.Describe) > 0 {
		md, err := ca.DescribeTopics(a.Describe)
		if err != nil {
			return nil, err
		}
		for _, t := range md {
			sort.Slice(t.Partitions, func(i, j int) bool { return t.Partitions[i].ID < t.Partitions[j].ID })
			for _, p := range t.Partitions {
				parts[t.Name] = append(parts[t.Name], p.ID)
				leaders[t.Name] = append(leaders[t.Name], p.Leader)
			}
		}
	}
	bs, _, err := ca.DescribeCluster()
	if err != nil {
		return nil, err
	}
	return map[string]any{"topics": names, "partitions": parts, "leaders": leaders, "brokers": brokerList(bs)}, nil
}

func deleteTopics(_ context.Context, bootstrap string, a struct{ Topics []string }) (any, error) {
	ca, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer ca.Close()
	out := [][2]any{}
	for _, t := range a.Topics {
		err := ca.DeleteTopic(t)
		if err != nil && code(err) == -1 {
			return nil, err
		}
		out = append(out, [2]any{t, code(err)})
	}
	return map[string]any{"errors": out}, nil
}
