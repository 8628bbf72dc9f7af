// Transactions: commit and abort, and consume-transform-produce.
package main

import (
	"context"
	"fmt"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"pgkafka/compat/go/internal/runner"
)

func transactional(ctx context.Context, bootstrap, id string) (*kafka.Producer, error) {
	p, err := kafka.NewProducer(conf(bootstrap, kafka.ConfigMap{"transactional.id": id, "linger.ms": 20}))
	if err != nil {
		return nil, err
	}
	if err := p.InitTransactions(ctx); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

func transaction(ctx context.Context, bootstrap string, a struct {
	Topic         string       `json:"topic"`
	TransactionID string       `json:"transactionalId"`
	Commit        []runner.Rec `json:"commit"`
	Abort         []runner.Rec `json:"abort"`
}) (any, error) {
	p, err := transactional(ctx, bootstrap, a.TransactionID)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	for i, recs := range [][]runner.Rec{a.Commit, a.Abort} {
		if err := p.BeginTransaction(); err != nil {
			return nil, err
		}
		if _, err := send(ctx, p, a.Topic, recs); err != nil {
			return nil, err
		}
		if i == 0 {
			err = p.CommitTransaction(ctx)
		} else {
			err = p.AbortTransaction(ctx)
		}
		if err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// transform: a group member copies what each poll returns to `output` ("t:" +
// value) in a transaction that also commits the consumer's positions
// (SendOffsetsToTransaction with the consumer's group metadata).
func transform(ctx context.Context, bootstrap string, a struct {
	Group         string `json:"group"`
	Input         string `json:"input"`
	Output        string `json:"output"`
	TransactionID string `json:"transactionalId"`
	Expect        int    `json:"expect"`
}) (any, error) {
	p, err := transactional(ctx, bootstrap, a.TransactionID)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	c, err := groupConsumer(bootstrap, groupArgs{Group: a.Group, Topic: a.Input}, kafka.ConfigMap{"isolation.level": "read_committed"})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if err := c.Subscribe(a.Input, nil); err != nil {
		return nil, err
	}
	seen, rounds := 0, 0
	for seen < a.Expect {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("transformed %d of %d: %w", seen, a.Expect, ctx.Err())
		}
		m, ok := c.Poll(200).(*kafka.Message)
		if !ok {
			continue
		}
		if err := p.BeginTransaction(); err != nil {
			return nil, err
		}
		out := []runner.Rec{{Partition: m.TopicPartition.Partition, Key: m.Key, Value: append([]byte("t:"), m.Value...)}}
		for _, h := range m.Headers {
			out[0].Headers = append(out[0].Headers, runner.Header{Key: h.Key, Value: h.Value})
		}
		if _, err := send(ctx, p, a.Output, out); err != nil {
			return nil, err
		}
		position, err := c.Position([]kafka.TopicPartition{{Topic: &a.Input, Partition: m.TopicPartition.Partition}})
		if err != nil {
			return nil, err
		}
		meta, err := c.GetConsumerGroupMetadata()
		if err != nil {
			return nil, err
		}
		if err := p.SendOffsetsToTransaction(ctx, position, meta); err != nil {
			return nil, err
		}
		if err := p.CommitTransaction(ctx); err != nil {
			return nil, err
		}
		seen++
		rounds++
	}
	return map[string]any{"transformed": seen, "transactions": rounds}, nil
}
