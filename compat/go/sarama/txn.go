// Transactions: commit and abort, and consume-transform-produce.
package main

import (
	"context"
	"sync"

	"github.com/IBM/sarama"

	"pgkafka/compat/go/internal/runner"
)

func transactional(bootstrap, id string) (sarama.SyncProducer, error) {
	c := config()
	c.Producer.Idempotent = true
	c.Producer.Transaction.ID = id
	c.Net.MaxOpenRequests = 1
	return sarama.NewSyncProducer([]string{bootstrap}, c)
}

// transaction: one transaction committed, one aborted (sarama's transactional producer).
func transaction(_ context.Context, bootstrap string, a struct {
	Topic         string       `json:"topic"`
	TransactionID string       `json:"transactionalId"`
	Commit        []runner.Rec `json:"commit"`
	Abort         []runner.Rec `json:"abort"`
}) (any, error) {
	p, err := transactional(bootstrap, a.TransactionID)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	for i, recs := range [][]runner.Rec{a.Commit, a.Abort} {
		if err := p.BeginTxn(); err != nil {
			return nil, err
		}
		msgs := make([]*sarama.ProducerMessage, len(recs))
		for j, r := range recs {
			msgs[j] = toMessage(a.Topic, r)
		}
		if err := p.SendMessages(msgs); err != nil {
			return nil, err
		}
		if i == 0 {
			err = p.CommitTxn()
		} else {
			err = p.AbortTxn()
		}
		if err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// transform: a group member copies each record to `output` ("t:" + value) in a
// transaction that also commits the consumed offset (AddMessageToTxn).
func transform(ctx context.Context, bootstrap string, a struct {
	Group         string `json:"group"`
	Input         string `json:"input"`
	Output        string `json:"output"`
	TransactionID string `json:"transactionalId"`
	Expect        int    `json:"expect"`
}) (any, error) {
	p, err := transactional(bootstrap, a.TransactionID)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	c := config()
	c.Consumer.Offsets.AutoCommit.Enable = false
	c.Consumer.IsolationLevel = sarama.ReadCommitted
	var mu sync.Mutex
	rounds := 0
	h := &handler{mark: 0, onClaim: func(s sarama.ConsumerGroupSession, m *sarama.ConsumerMessage) error {
		mu.Lock()
		defer mu.Unlock()
		if err := p.BeginTxn(); err != nil {
			return err
		}
		out := &sarama.ProducerMessage{Topic: a.Output, Partition: m.Partition, Key: bytesOrNil(m.Key), Value: sarama.ByteEncoder(append([]byte("t:"), m.Value...))}
		for _, h := range m.Headers {
			out.Headers = append(out.Headers, *h)
		}
		if _, _, err := p.SendMessage(out); err != nil {
			return err
		}
		if err := p.AddMessageToTxn(m, a.Group, nil); err != nil {
			return err
		}
		rounds++
		return p.CommitTxn()
	}}
	gctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, errs, err := join(gctx, bootstrap, a.Group, a.Input, h, c)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	if err := waitFor(ctx, "the records", errs, func() bool { return h.count() >= a.Expect }); err != nil {
		return nil, err
	}
	return map[string]any{"transformed": h.count(), "transactions": rounds}, nil
}
