// franz-go (kgo, kadm) driven by compat/go-franz.test.ts: reads a JSON
// scenario on stdin (see internal/runner) and prints JSON results.
package main

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

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
		"txn_admin":      runner.Typed(txnAdmin),
		"login":          runner.Typed(login),
	})
}

func client(bootstrap string, opts ...kgo.Opt) (*kgo.Client, error) {
	base := []kgo.Opt{kgo.SeedBrokers(bootstrap), kgo.ClientID("compat-franz-go"), kgo.RetryTimeout(15 * time.Second)}
	base = append(base, securityOpts()...)
	return kgo.NewClient(append(base, opts...)...)
}

func admin(bootstrap string) (*kadm.Client, *kgo.Client, error) {
	cl, err := client(bootstrap)
	if err != nil {
		return nil, nil, err
	}
	return kadm.NewClient(cl), cl, nil
}

// code is the Kafka error code of err (0 for nil, -1 for an error that is not Kafka's).
func code(err error) int16 {
	if err == nil {
		return 0
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	return -1
}

type topicSpec struct {
	Name       string            `json:"name"`
	Partitions int32             `json:"partitions"`
	Configs    map[string]string `json:"configs"`
}

func create(ctx context.Context, bootstrap string, a struct{ Topics []topicSpec }) (any, error) {
	adm, cl, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	out := [][2]any{}
	for _, t := range a.Topics {
		cfg := map[string]*string{}
		for k, v := range t.Configs {
			cfg[k] = &v
		}
		res, err := adm.CreateTopic(ctx, t.Partitions, 1, cfg, t.Name)
		if err != nil && res.Err == nil {
			return nil, err
		}
		out = append(out, [2]any{t.Name, code(res.Err)})
	}
	return map[string]any{"errors": out}, nil
}

func list(ctx context.Context, bootstrap string, a struct{ Describe []string }) (any, error) {
	adm, cl, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	all, err := adm.ListTopics(ctx)
	if err != nil {
		return nil, err
	}
	md, err := adm.Metadata(ctx, a.Describe...)
	if err != nil {
		return nil, err
	}
	parts := map[string][]int32{}
	leaders := map[string][]int32{}
	for _, t := range md.Topics.Sorted() {
		for _, p := range t.Partitions.Sorted() {
			parts[t.Topic] = append(parts[t.Topic], p.Partition)
			leaders[t.Topic] = append(leaders[t.Topic], p.Leader)
		}
	}
	brokers := []map[string]any{}
	for _, b := range md.Brokers {
		brokers = append(brokers, map[string]any{"id": b.NodeID, "host": b.Host, "port": b.Port})
	}
	return map[string]any{"topics": all.Names(), "partitions": parts, "leaders": leaders, "brokers": brokers}, nil
}

func deleteTopics(ctx context.Context, bootstrap string, a struct{ Topics []string }) (any, error) {
	adm, cl, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	res, err := adm.DeleteTopics(ctx, a.Topics...)
	if err != nil {
		return nil, err
	}
	out := [][2]any{}
	for _, t := range a.Topics {
		out = append(out, [2]any{t, code(res[t].Err)})
	}
	return map[string]any{"errors": out}, nil
}
