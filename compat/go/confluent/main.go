// confluent-kafka-go v2 (cgo over the librdkafka its module bundles as a
// static library) driven by compat/go-confluent-kafka-go.test.ts: reads a
// JSON scenario on stdin (see internal/runner) and prints JSON results.
package main

import (
	"context"
	"errors"
	"sort"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

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
		"login":          runner.Typed(login),
	})
}

func conf(bootstrap string, extra kafka.ConfigMap) *kafka.ConfigMap {
	c := kafka.ConfigMap{"bootstrap.servers": bootstrap, "client.id": "compat-confluent-kafka-go", "log_level": 3}
	securityConf(c)
	for k, v := range extra {
		c[k] = v
	}
	return &c
}

func admin(bootstrap string) (*kafka.AdminClient, error) {
	return kafka.NewAdminClient(conf(bootstrap, nil))
}

func code(err error) int16 {
	if err == nil {
		return 0
	}
	var ke kafka.Error
	if errors.As(err, &ke) {
		if ke.Code() == kafka.ErrNoError {
			return 0
		}
		return int16(ke.Code())
	}
	return -1
}

type topicSpec struct {
	Name       string            `json:"name"`
	Partitions int               `json:"partitions"`
	Configs    map[string]string `json:"configs"`
}

func create(ctx context.Context, bootstrap string, a struct{ Topics []topicSpec }) (any, error) {
	ad, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer ad.Close()
	out := [][2]any{}
	for _, t := range a.Topics {
		res, err := ad.CreateTopics(ctx, []kafka.TopicSpecification{{Topic: t.Name, NumPartitions: t.Partitions, ReplicationFactor: 1, Config: t.Configs}})
		if err != nil {
			return nil, err
		}
		out = append(out, [2]any{t.Name, code(res[0].Error)})
	}
	return map[string]any{"errors": out}, nil
}

func list(_ context.Context, bootstrap string, a struct{ Describe []string }) (any, error) {
	ad, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer ad.Close()
	md, err := ad.GetMetadata(nil, true, 10000)
	if err != nil {
		return nil, err
	}
	names := []string{}
	for n := range md.Topics {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := map[string][]int32{}
	leaders := map[string][]int32{}
	for _, n := range a.Describe {
		t := md.Topics[n]
		sort.Slice(t.Partitions, func(i, j int) bool { return t.Partitions[i].ID < t.Partitions[j].ID })
		for _, p := range t.Partitions {
			parts[n] = append(parts[n], p.ID)
			leaders[n] = append(leaders[n], p.Leader)
		}
	}
	brokers := []map[string]any{}
	for _, b := range md.Brokers {
		brokers = append(brokers, map[string]any{"id": b.ID, "host": b.Host, "port": b.Port})
	}
	return map[string]any{"topics": names, "partitions": parts, "leaders": leaders, "brokers": brokers}, nil
}

func deleteTopics(ctx context.Context, bootstrap string, a struct{ Topics []string }) (any, error) {
	ad, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer ad.Close()
	res, err := ad.DeleteTopics(ctx, a.Topics)
	if err != nil {
		return nil, err
	}
	out := [][2]any{}
	for _, r := range res {
		out = append(out, [2]any{r.Topic, code(r.Error)})
	}
	return map[string]any{"errors": out}, nil
}
