// Consumer groups: one member, resume, and a second member rebalancing.
package main

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"pgkafka/compat/go/internal/runner"
)

type groupArgs struct {
	Group  string `json:"group"`
	Topic  string `json:"topic"`
	Expect int    `json:"expect"`
}

// groupConsume joins a group, reads `expect` records, commits them and leaves;
// it reports the records and the offsets the group has committed afterwards.
func groupConsume(ctx context.Context, bootstrap string, a groupArgs) (any, error) {
	cl, err := client(bootstrap, kgo.ConsumerGroup(a.Group), kgo.ConsumeTopics(a.Topic), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(500*time.Millisecond))
	if err != nil {
		return nil, err
	}
	out := []runner.ReadRec{}
	for len(out) < a.Expect {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			cl.Close()
			return nil, fmt.Errorf("read %d of %d records: %w", len(out), a.Expect, ctx.Err())
		}
		if err := fs.Err(); err != nil {
			cl.Close()
			return nil, err
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, fromRecord(r)) })
	}
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		cl.Close()
		return nil, err
	}
	cl.LeaveGroup()
	cl.Close()
	committed, err := committedOffsets(ctx, bootstrap, a.Group, a.Topic)
	if err != nil {
		return nil, err
	}
	runner.SortRecs(out)
	return map[string]any{"records": out, "committed": committed}, nil
}

// committedOffsets: partition → committed offset of group on topic (OffsetFetch through kadm).
func committedOffsets(ctx context.Context, bootstrap, group, topic string) (map[int32]int64, error) {
	adm, cl, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	res, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		return nil, err
	}
	out := map[int32]int64{}
	for p, o := range res[topic] {
		if o.Err != nil {
			return nil, o.Err
		}
		out[p] = o.At
	}
	return out, nil
}

type member struct {
	cl       *kgo.Client
	mu       sync.Mutex
	assigned map[int32]bool
	records  []runner.ReadRec
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

func joinMember(ctx context.Context, bootstrap string, a groupArgs, balancer kgo.GroupBalancer) (*member, error) {
	m := &member{assigned: map[int32]bool{}}
	cl, err := client(bootstrap, kgo.ConsumerGroup(a.Group), kgo.ConsumeTopics(a.Topic), kgo.Balancers(balancer),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(300*time.Millisecond), kgo.AutoCommitInterval(200*time.Millisecond),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, ps map[string][]int32) {
			m.mu.Lock()
			for _, p := range ps[a.Topic] {
				m.assigned[p] = true
			}
			m.mu.Unlock()
		}),
		kgo.OnPartitionsRevoked(func(ctx context.Context, c *kgo.Client, ps map[string][]int32) {
			_ = c.CommitMarkedOffsets(ctx)
			m.mu.Lock()
			for _, p := range ps[a.Topic] {
				m.assigned[p] = false
			}
			m.mu.Unlock()
		}))
	if err != nil {
		return nil, err
	}
	m.cl = cl
	go func() {
		for {
			fs := cl.PollFetches(ctx)
			if fs.IsClientClosed() || ctx.Err() != nil {
				return
			}
			m.mu.Lock()
			fs.EachRecord(func(r *kgo.Record) { m.records = append(m.records, fromRecord(r)) })
			m.mu.Unlock()
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

// rebalance: member a joins and owns every partition; member b joins and the
// group rebalances the partitions between them (cooperative-sticky, franz-go's
// default, or eager range); then records are produced and each is read once.
func rebalance(ctx context.Context, bootstrap string, a struct {
	groupArgs
	Partitions int          `json:"partitions"`
	Balancer   string       `json:"balancer"`
	Records    []runner.Rec `json:"records"`
}) (any, error) {
	balancer := kgo.CooperativeStickyBalancer()
	if a.Balancer == "range" {
		balancer = kgo.RangeBalancer()
	}
	ma, err := joinMember(ctx, bootstrap, a.groupArgs, balancer)
	if err != nil {
		return nil, err
	}
	defer ma.cl.Close()
	if err := waitFor(ctx, "the first member to own every partition", func() bool { return len(ma.owned()) == a.Partitions }); err != nil {
		return nil, err
	}
	first := ma.owned()
	mb, err := joinMember(ctx, bootstrap, a.groupArgs, balancer)
	if err != nil {
		return nil, err
	}
	defer mb.cl.Close()
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
	count := func() int {
		ma.mu.Lock()
		mb.mu.Lock()
		defer ma.mu.Unlock()
		defer mb.mu.Unlock()
		return len(ma.records) + len(mb.records)
	}
	if err := waitFor(ctx, "every record", func() bool { return count() >= len(a.Records) }); err != nil {
		return nil, err
	}
	time.Sleep(300 * time.Millisecond) // a duplicate delivery would show up here
	for _, m := range []*member{ma, mb} {
		if err := m.cl.CommitUncommittedOffsets(ctx); err != nil {
			return nil, err
		}
	}
	ma.mu.Lock()
	mb.mu.Lock()
	ra, rb := append([]runner.ReadRec{}, ma.records...), append([]runner.ReadRec{}, mb.records...)
	ma.mu.Unlock()
	mb.mu.Unlock()
	runner.SortRecs(ra)
	runner.SortRecs(rb)
	return map[string]any{"first": first, "a": pa, "b": pb, "recordsA": ra, "recordsB": rb}, nil
}
