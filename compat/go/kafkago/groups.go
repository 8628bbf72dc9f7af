// Consumer groups: one member, resume, and a second member rebalancing.
package main

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"pgkafka/compat/go/internal/runner"
)

type groupArgs struct {
	Group  string `json:"group"`
	Topic  string `json:"topic"`
	Expect int    `json:"expect"`
}

func groupReader(bootstrap string, a groupArgs) *kafka.Reader {
	return kafka.NewReader(kafka.ReaderConfig{Brokers: []string{bootstrap}, Dialer: dialer(), GroupID: a.Group, Topic: a.Topic, StartOffset: kafka.FirstOffset,
		MaxWait: 300 * time.Millisecond, HeartbeatInterval: time.Second, SessionTimeout: 10 * time.Second, RebalanceTimeout: 5 * time.Second})
}

// groupConsume: a group Reader fetches `expect` messages, commits them (CommitMessages) and closes (LeaveGroup).
func groupConsume(ctx context.Context, bootstrap string, a groupArgs) (any, error) {
	r := groupReader(bootstrap, a)
	out := []runner.ReadRec{}
	msgs := []kafka.Message{}
	for len(msgs) < a.Expect {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("read %d of %d: %w", len(msgs), a.Expect, err)
		}
		msgs = append(msgs, m)
		out = append(out, fromMessage(m))
	}
	if err := r.CommitMessages(ctx, msgs...); err != nil {
		r.Close()
		return nil, err
	}
	if err := r.Close(); err != nil {
		return nil, err
	}
	committed, err := committedOffsets(ctx, bootstrap, a.Group, a.Topic)
	if err != nil {
		return nil, err
	}
	runner.SortRecs(out)
	return map[string]any{"records": out, "committed": committed}, nil
}

func committedOffsets(ctx context.Context, bootstrap, group, topic string) (map[int]int64, error) {
	ps, err := partitionsOf(ctx, bootstrap, topic)
	if err != nil {
		return nil, err
	}
	res, err := client(bootstrap).OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: ps}})
	if err != nil {
		return nil, err
	}
	if res.Error != nil {
		return nil, res.Error
	}
	out := map[int]int64{}
	for _, p := range res.Topics[topic] {
		if p.Error != nil {
			return nil, p.Error
		}
		if p.CommittedOffset >= 0 {
			out[p.Partition] = p.CommittedOffset
		}
	}
	return out, nil
}

// member runs a kafka.ConsumerGroup: each generation reads its assigned
// partitions with one Reader each, and commits what it read when the
// generation ends.
type member struct {
	mu       sync.Mutex
	assigned []int
	records  []runner.ReadRec
}

func (m *member) owned() []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]int{}, m.assigned...)
}

func (m *member) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.records)
}

func runMember(ctx context.Context, bootstrap string, a groupArgs, errs chan<- error) (*member, error) {
	cg, err := kafka.NewConsumerGroup(kafka.ConsumerGroupConfig{ID: a.Group, Brokers: []string{bootstrap}, Dialer: dialer(), Topics: []string{a.Topic},
		HeartbeatInterval: 500 * time.Millisecond, SessionTimeout: 10 * time.Second, RebalanceTimeout: 5 * time.Second, StartOffset: kafka.FirstOffset})
	if err != nil {
		return nil, err
	}
	m := &member{}
	go func() {
		defer cg.Close()
		for {
			gen, err := cg.Next(ctx)
			if err != nil {
				if ctx.Err() == nil {
					errs <- err
				}
				return
			}
			ps := []int{}
			for _, pa := range gen.Assignments[a.Topic] {
				ps = append(ps, pa.ID)
			}
			sort.Ints(ps)
			m.mu.Lock()
			m.assigned = ps
			m.mu.Unlock()
			for _, pa := range gen.Assignments[a.Topic] {
				pa := pa
				gen.Start(func(gctx context.Context) {
					r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{bootstrap}, Dialer: dialer(), Topic: a.Topic, Partition: pa.ID, MaxWait: 300 * time.Millisecond})
					defer r.Close()
					start := pa.Offset
					if start < 0 {
						start = kafka.FirstOffset
					}
					_ = r.SetOffset(start)
					for {
						msg, err := r.ReadMessage(gctx)
						if err != nil {
							return
						}
						m.mu.Lock()
						m.records = append(m.records, fromMessage(msg))
						m.mu.Unlock()
						_ = gen.CommitOffsets(map[string]map[int]int64{a.Topic: {pa.ID: msg.Offset + 1}})
					}
				})
			}
		}
	}()
	return m, nil
}

func waitFor(ctx context.Context, what string, errs chan error, cond func() bool) error {
	for !cond() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case e := <-errs:
			return fmt.Errorf("waiting for %s: %w", what, e)
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

func rebalance(ctx context.Context, bootstrap string, a struct {
	groupArgs
	Partitions int          `json:"partitions"`
	Records    []runner.Rec `json:"records"`
}) (any, error) {
	gctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, 4)
	ma, err := runMember(gctx, bootstrap, a.groupArgs, errs)
	if err != nil {
		return nil, err
	}
	if err := waitFor(ctx, "the first member to own every partition", errs, func() bool { return len(ma.owned()) == a.Partitions }); err != nil {
		return nil, err
	}
	first := ma.owned()
	mb, err := runMember(gctx, bootstrap, a.groupArgs, errs)
	if err != nil {
		return nil, err
	}
	if err := waitFor(ctx, "the partitions to be split between both members", errs, func() bool {
		x, y := ma.owned(), mb.owned()
		return len(x) > 0 && len(y) > 0 && len(x)+len(y) == a.Partitions
	}); err != nil {
		return nil, fmt.Errorf("%w (a owns %v, b owns %v)", err, ma.owned(), mb.owned())
	}
	pa, pb := ma.owned(), mb.owned()
	if _, err := produce(ctx, bootstrap, produceArgs{Topic: a.Topic, Records: a.Records}); err != nil {
		return nil, err
	}
	if err := waitFor(ctx, "every record", errs, func() bool { return ma.count()+mb.count() >= len(a.Records) }); err != nil {
		return nil, err
	}
	time.Sleep(300 * time.Millisecond) // a duplicate delivery would show up here
	ma.mu.Lock()
	mb.mu.Lock()
	ra, rb := append([]runner.ReadRec{}, ma.records...), append([]runner.ReadRec{}, mb.records...)
	ma.mu.Unlock()
	mb.mu.Unlock()
	runner.SortRecs(ra)
	runner.SortRecs(rb)
	return map[string]any{"first": first, "a": pa, "b": pb, "recordsA": ra, "recordsB": rb}, nil
}
