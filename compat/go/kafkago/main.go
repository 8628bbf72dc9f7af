// segmentio/kafka-go driven by compat/go-kafka-go.test.ts: reads a JSON
// scenario on stdin (see internal/runner) and prints JSON results. Writer
// (every codec) and Reader (one partition, or a group) as applications use
// them; kafka.Client for admin; kafka.ConsumerGroup to watch a rebalance.
// kafka-go has no idempotent or transactional producer and no DeleteRecords
// or DescribeCluster call, nor the transaction admin calls: those ops are absent.
package main

import (
	"context"
	"errors"
	"sort"
	"time"

	"github.com/segmentio/kafka-go"

	"pgkafka/compat/go/internal/runner"
)

func main() {
	runner.Main(map[string]runner.Op{
		"create":        runner.Typed(create),
		"list":          runner.Typed(list),
		"delete":        runner.Typed(deleteTopics),
		"produce":       runner.Typed(produce),
		"fetch":         runner.Typed(fetch),
		"offsets":       runner.Typed(offsets),
		"group_consume": runner.Typed(groupConsume),
		"rebalance":     runner.Typed(rebalance),
		"configs":       runner.Typed(configs),
		"partitions":    runner.Typed(partitions),
		"groups":        runner.Typed(groups),
		"acls":          runner.Typed(acls),
		"delete_groups": runner.Typed(deleteGroups),
		"login":         runner.Typed(login),
	})
}

func client(bootstrap string) *kafka.Client {
	return &kafka.Client{Addr: kafka.TCP(bootstrap), Timeout: 15 * time.Second, Transport: transport()}
}

// code is the Kafka error code of err (0 for nil, -1 for an error that is not Kafka's).
func code(err error) int16 {
	if err == nil {
		return 0
	}
	var ke kafka.Error
	if errors.As(err, &ke) {
		return int16(ke)
	}
	return -1
}

type topicSpec struct {
	Name       string            `json:"name"`
	Partitions int               `json:"partitions"`
	Configs    map[string]string `json:"configs"`
}

func create(ctx context.Context, bootstrap string, a struct{ Topics []topicSpec }) (any, error) {
	out := [][2]any{}
	for _, t := range a.Topics {
		cfg := []kafka.ConfigEntry{}
		for k, v := range t.Configs {
			cfg = append(cfg, kafka.ConfigEntry{ConfigName: k, ConfigValue: v})
		}
		res, err := client(bootstrap).CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{Topic: t.Name, NumPartitions: t.Partitions, ReplicationFactor: 1, ConfigEntries: cfg}}})
		if err != nil {
			return nil, err
		}
		out = append(out, [2]any{t.Name, code(res.Errors[t.Name])})
	}
	return map[string]any{"errors": out}, nil
}

func list(ctx context.Context, bootstrap string, a struct{ Describe []string }) (any, error) {
	all, err := client(bootstrap).Metadata(ctx, &kafka.MetadataRequest{})
	if err != nil {
		return nil, err
	}
	names := []string{}
	for _, t := range all.Topics {
		names = append(names, t.Name)
	}
	sort.Strings(names)
	parts := map[string][]int{}
	leaders := map[string][]int{}
	if len(a.Describe) > 0 {
		md, err := client(bootstrap).Metadata(ctx, &kafka.MetadataRequest{Topics: a.Describe})
		if err != nil {
			return nil, err
		}
		for _, t := range md.Topics {
			if t.Error != nil {
				return nil, t.Error
			}
			sort.Slice(t.Partitions, func(i, j int) bool { return t.Partitions[i].ID < t.Partitions[j].ID })
			for _, p := range t.Partitions {
				parts[t.Name] = append(parts[t.Name], p.ID)
				leaders[t.Name] = append(leaders[t.Name], p.Leader.ID)
			}
		}
	}
	brokers := []map[string]any{}
	for _, b := range all.Brokers {
		brokers = append(brokers, map[string]any{"id": b.ID, "host": b.Host, "port": b.Port})
	}
	return map[string]any{"topics": names, "partitions": parts, "leaders": leaders, "brokers": brokers}, nil
}

func deleteTopics(ctx context.Context, bootstrap string, a struct{ Topics []string }) (any, error) {
	res, err := client(bootstrap).DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: a.Topics})
	if err != nil {
		return nil, err
	}
	out := [][2]any{}
	for _, t := range a.Topics {
		out = append(out, [2]any{t, code(res.Errors[t])})
	}
	return map[string]any{"errors": out}, nil
}
