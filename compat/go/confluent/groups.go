// Consumer groups: one member, resume, and a second member rebalancing.
package main

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"pgkafka/compat/go/internal/runner"
)

type groupArgs struct {
	Group  string `json:"group"`
	Topic  string `json:"topic"`
	Expect int    `json:"expect"`
}

func groupConsumer(bootstrap string, a groupArgs, extra kafka.ConfigMap) (*kafka.Consumer, error) {
	cfg := kafka.ConfigMap{"group.id": a.Group, "enable.auto.commit": false, "auto.offset.reset": "earliest", "session.timeout.ms": 10000, "heartbeat.interval.ms": 500}
	for k, v := range extra {
		cfg[k] = v
	}
	return kafka.NewConsumer(conf(bootstrap, cfg))
}

// groupConsume: Subscribe, read `expect` messages, Commit() synchronously, Close() (leaves the group).
func groupConsume(ctx context.Context, bootstrap string, a groupArgs) (any, error) {
	c, err := groupConsumer(bootstrap, a, nil)
	if err != nil {
		return nil, err
	}
	if err := c.Subscribe(a.Topic, nil); err != nil {
		c.Close()
		return nil, err
	}
	out := []runner.ReadRec{}
	for len(out) < a.Expect {
		if ctx.Err() != nil {
			c.Close()
			return nil, fmt.Errorf("read %d of %d: %w", len(out), a.Expect, ctx.Err())
		}
		switch e := c.Poll(200).(type) {
		case *kafka.Message:
			out = append(out, fromMessage(e))
		case kafka.Error:
			c.Close()
			return nil, e
		}
	}
	if _, err := c.Commit(); err != nil {
		c.Close()
		return nil, err
	}
	if err := c.Close(); err != nil {
		return nil, err
	}
	committed, err := committedOffsets(ctx, bootstrap, a.Group, a.Topic)
	if err != nil {
		return nil, err
	}
	runner.SortRecs(out)
	return map[string]any{"records": out, "committed": committed}, nil
}

func committedOffsets(ctx context.Context, bootstrap, group, topic string) (map[int32]int64, error) {
	ad, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer ad.Close()
	res, err := ad.ListConsumerGroupOffsets(ctx, []kafka.ConsumerGroupTopicPartitions{{Group: group}})
	if err != nil {
		return nil, err
	}
	out := map[int32]int64{}
	for _, g := range res.ConsumerGroupsTopicPartitions {
		for _, tp := range g.Partitions {
			if tp.Error != nil {
				return nil, tp.Error
			}
			if *tp.Topic == topic && tp.Offset >= 0 {
				out[tp.Partition] = int64(tp.Offset)
			}
		}
	}
	return out, nil
}

type member struct {
	c        *kafka.Consumer
	mu       sync.Mutex
	assigned map[int32]bool
	records  []runner.ReadRec
	err      error
}

func (m *member) owned() []int32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []int32{}
	for p, ok := range m.assigned {
		if ok {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func (m *member) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.records)
}

// join subscribes a member (librdkafka's default range,roundrobin assignors:
// eager) and polls it on its own goroutine until stop is closed.
func join(bootstrap string, a groupArgs, stop chan struct{}, wg *sync.WaitGroup) (*member, error) {
	c, err := groupConsumer(bootstrap, a, kafka.ConfigMap{"enable.auto.commit": true, "auto.commit.interval.ms": 200})
	if err != nil {
		return nil, err
	}
	m := &member{c: c, assigned: map[int32]bool{}}
	err = c.Subscribe(a.Topic, func(_ *kafka.Consumer, e kafka.Event) error {
		m.mu.Lock()
		defer m.mu.Unlock()
		switch ev := e.(type) {
		case kafka.AssignedPartitions:
			for _, tp := range ev.Partitions {
				m.assigned[tp.Partition] = true
			}
		case kafka.RevokedPartitions:
			for _, tp := range ev.Partitions {
				m.assigned[tp.Partition] = false
			}
		}
		return nil
	})
	if err != nil {
		c.Close()
		return nil, err
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer c.Close()
		for {
			select {
			case <-stop:
				return
			default:
			}
			switch e := c.Poll(100).(type) {
			case *kafka.Message:
				m.mu.Lock()
				m.records = append(m.records, fromMessage(e))
				m.mu.Unlock()
			case kafka.Error:
				m.mu.Lock()
				m.err = e
				m.mu.Unlock()
			}
		}
	}()
	return m, nil
}

func waitFor(ctx context.Context, what string, cond func() bool) error {
	for !cond() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
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
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(stop)
	ma, err := join(bootstrap, a.groupArgs, stop, &wg)
	if err != nil {
		return nil, err
	}
	if err := waitFor(ctx, "the first member to own every partition", func() bool { return len(ma.owned()) == a.Partitions }); err != nil {
		return nil, err
	}
	first := ma.owned()
	mb, err := join(bootstrap, a.groupArgs, stop, &wg)
	if err != nil {
		return nil, err
	}
	if err := waitFor(ctx, "the partitions to be split between both members", func() bool {
		x, y := ma.owned(), mb.owned()
		return len(x) > 0 && len(y) > 0 && len(x)+len(y) == a.Partitions
	}); err != nil {
		return nil, fmt.Errorf("%w (a owns %v, b owns %v)", err, ma.owned(), mb.owned())
	}
	pa, pb := ma.owned(), mb.owned()
	if _, err := produce(ctx, bootstrap, produceArgs{Topic: a.Topic, Records: a.Records}); err != nil {
		return nil, err
	}
	if err := waitFor(ctx, "every record", func() bool { return ma.count()+mb.count() >= len(a.Records) }); err != nil {
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
