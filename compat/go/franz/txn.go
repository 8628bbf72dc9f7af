// Transactions: commit and abort, consume-transform-produce, and the transaction admin calls.
package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"pgkafka/compat/go/internal/runner"
)

// transaction: one transaction committed, one aborted; then reads as read_committed and read_uncommitted.
func transaction(ctx context.Context, bootstrap string, a struct {
	Topic         string       `json:"topic"`
	TransactionID string       `json:"transactionalId"`
	Commit        []runner.Rec `json:"commit"`
	Abort         []runner.Rec `json:"abort"`
}) (any, error) {
	cl, err := client(bootstrap, kgo.TransactionalID(a.TransactionID), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	for _, step := range []struct {
		recs   []runner.Rec
		commit kgo.TransactionEndTry
	}{{a.Commit, kgo.TryCommit}, {a.Abort, kgo.TryAbort}} {
		if err := cl.BeginTransaction(); err != nil {
			return nil, err
		}
		recs := make([]*kgo.Record, len(step.recs))
		for i, r := range step.recs {
			recs[i] = toRecord(a.Topic, r)
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			return nil, err
		}
		if err := cl.EndTransaction(ctx, step.commit); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// transform: GroupTransactSession consumes `input` in a group, produces each
// record's value to `output` and commits the offsets in the same transaction.
func transform(ctx context.Context, bootstrap string, a struct {
	Group         string `json:"group"`
	Input         string `json:"input"`
	Output        string `json:"output"`
	TransactionID string `json:"transactionalId"`
	Expect        int    `json:"expect"`
}) (any, error) {
	s, err := kgo.NewGroupTransactSession(kgo.SeedBrokers(bootstrap), kgo.ClientID("compat-franz-go"), kgo.TransactionalID(a.TransactionID),
		kgo.ConsumerGroup(a.Group), kgo.ConsumeTopics(a.Input), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(300*time.Millisecond),
		kgo.RequireStableFetchOffsets())
	if err != nil {
		return nil, err
	}
	defer s.Close()
	seen, rounds := 0, 0
	for seen < a.Expect {
		fs := s.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil, fmt.Errorf("transformed %d of %d: %w", seen, a.Expect, ctx.Err())
		}
		if err := fs.Err(); err != nil {
			return nil, err
		}
		if fs.NumRecords() == 0 {
			continue
		}
		if err := s.Begin(); err != nil {
			return nil, err
		}
		fs.EachRecord(func(r *kgo.Record) {
			out := &kgo.Record{Topic: a.Output, Partition: r.Partition, Key: r.Key, Value: append([]byte("t:"), r.Value...), Headers: r.Headers}
			s.Produce(ctx, out, nil)
			seen++
		})
		committed, err := s.End(ctx, kgo.TryCommit)
		if err != nil {
			return nil, err
		}
		if !committed {
			return nil, errors.New("the transaction was aborted")
		}
		rounds++
	}
	return map[string]any{"transformed": seen, "transactions": rounds}, nil
}

// txnAdmin: DescribeProducers, ListTransactions and DescribeTransactions
// while a transaction is open, and DescribeTransactions after its commit.
func txnAdmin(ctx context.Context, bootstrap string, a struct {
	Topic         string       `json:"topic"`
	TransactionID string       `json:"transactionalId"`
	Records       []runner.Rec `json:"records"`
}) (any, error) {
	cl, err := client(bootstrap, kgo.TransactionalID(a.TransactionID), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	adm, acl, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer acl.Close()
	if err := cl.BeginTransaction(); err != nil {
		return nil, err
	}
	recs := make([]*kgo.Record, len(a.Records))
	for i, r := range a.Records {
		recs[i] = toRecord(a.Topic, r)
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return nil, err
	}
	describeTxn := func() (map[string]any, error) {
		d, err := adm.DescribeTransactions(ctx, a.TransactionID)
		if err != nil {
			return nil, err
		}
		t := d[a.TransactionID]
		if t.Err != nil {
			return nil, t.Err
		}
		parts := map[string][]int32{}
		for topic, ps := range t.Topics {
			for p := range ps {
				parts[topic] = append(parts[topic], p)
			}
			sort.Slice(parts[topic], func(i, j int) bool { return parts[topic][i] < parts[topic][j] })
		}
		return map[string]any{"state": t.State, "producerId": t.ProducerID, "timeoutMs": t.TimeoutMillis, "partitions": parts}, nil
	}
	producers, err := adm.DescribeProducers(ctx, kadm.TopicsSet{a.Topic: {0: {}, 1: {}, 2: {}}})
	if err != nil {
		return nil, err
	}
	open := map[int32]any{}
	for _, p := range producers[a.Topic].Partitions {
		if p.Err != nil {
			return nil, p.Err
		}
		list := []map[string]any{}
		for _, d := range p.ActiveProducers {
			list = append(list, map[string]any{"producerId": d.ProducerID, "lastSequence": d.LastSequence, "txnStartOffset": d.CurrentTxnStartOffset})
		}
		open[p.Partition] = list
	}
	listed, err := adm.ListTransactions(ctx, nil, nil)
	if err != nil {
		return nil, err
	}
	during, err := describeTxn()
	if err != nil {
		return nil, err
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return nil, err
	}
	after, err := describeTxn()
	if err != nil {
		return nil, err
	}
	lt := listed[a.TransactionID]
	return map[string]any{"producers": open, "listed": map[string]any{"state": lt.State, "producerId": lt.ProducerID}, "during": during, "after": after}, nil
}
