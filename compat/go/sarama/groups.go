// Consumer groups: one member, resume, and a second member rebalancing.
package main

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/IBM/sarama"

	"pgkafka/compat/go/internal/runner"
)

type groupArgs struct {
	Group  string `json:"group"`
	Topic  string `json:"topic"`
	Expect int    `json:"expect"`
}

// handler collects messages of the claims it gets, marks the first `mark` of them, and reports its claims.
type handler struct {
	mu       sync.Mutex
	records  []runner.ReadRec
	marked   int
	mark     int
	assigned []int32
	session  sarama.ConsumerGroupSession
	onClaim  func(s sarama.ConsumerGroupSession, m *sarama.ConsumerMessage) error
}

func (h *handler) Setup(s sarama.ConsumerGroupSession) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.session = s
	h.assigned = []int32{}
	for _, ps := range s.Claims() {
		h.assigned = append(h.assigned, ps...)
	}
	sort.Slice(h.assigned, func(i, j int) bool { return h.assigned[i] < h.assigned[j] })
	return nil
}

func (h *handler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h *handler) ConsumeClaim(s sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for m := range claim.Messages() {
		if h.onClaim != nil {
			if err := h.onClaim(s, m); err != nil {
				return err
			}
		}
		h.mu.Lock()
		h.records = append(h.records, fromMessage(m))
		if h.mark < 0 || h.marked < h.mark {
			s.MarkMessage(m, "")
			h.marked++
		}
		h.mu.Unlock()
	}
	return nil
}

func (h *handler) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.records)
}

func (h *handler) owned() []int32 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]int32{}, h.assigned...)
}

// join runs a group member in the background until ctx ends.
func join(ctx context.Context, bootstrap, group, topic string, h *handler, c *sarama.Config) (sarama.ConsumerGroup, chan error, error) {
	g, err := sarama.NewConsumerGroup([]string{bootstrap}, group, c)
	if err != nil {
		return nil, nil, err
	}
	errs := make(chan error, 16)
	go func() {
		for ctx.Err() == nil {
			if err := g.Consume(ctx, []string{topic}, h); err != nil && ctx.Err() == nil {
				errs <- err
				return
			}
		}
	}()
	go func() {
		for e := range g.Errors() {
			select {
			case errs <- e:
			default:
			}
		}
	}()
	return g, errs, nil
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

// groupConsume joins, reads `expect` records, commits them (manual commit) and leaves.
func groupConsume(ctx context.Context, bootstrap string, a groupArgs) (any, error) {
	c := config()
	c.Consumer.Offsets.AutoCommit.Enable = false
	h := &handler{mark: -1}
	gctx, cancel := context.WithCancel(ctx)
	g, errs, err := join(gctx, bootstrap, a.Group, a.Topic, h, c)
	if err != nil {
		cancel()
		return nil, err
	}
	err = waitFor(ctx, "the records", errs, func() bool { return h.count() >= a.Expect })
	if err == nil {
		h.mu.Lock()
		h.session.Commit()
		h.mu.Unlock()
	}
	cancel()
	if cerr := g.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	committed, err := committedOffsets(bootstrap, a.Group, a.Topic)
	if err != nil {
		return nil, err
	}
	runner.SortRecs(h.records)
	return map[string]any{"records": h.records, "committed": committed}, nil
}

// committedOffsets: partition → committed offset of group on topic (OffsetFetch through ClusterAdmin).
func committedOffsets(bootstrap, group, topic string) (map[int32]int64, error) {
	ca, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer ca.Close()
	res, err := ca.ListConsumerGroupOffsets(group, nil)
	if err != nil {
		return nil, err
	}
	out := map[int32]int64{}
	for p, b := range res.Blocks[topic] {
		if b.Err != sarama.ErrNoError {
			return nil, b.Err
		}
		out[p] = b.Offset
	}
	return out, nil
}

// rebalance: member a joins and owns every partition; member b joins and the
// group (sarama's default range strategy) splits the partitions; then records
// are produced and each is read once.
func rebalance(ctx context.Context, bootstrap string, a struct {
	groupArgs
	Partitions int          `json:"partitions"`
	Records    []runner.Rec `json:"records"`
}) (any, error) {
	gctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ha, hb := &handler{mark: -1}, &handler{mark: -1}
	ga, errs, err := join(gctx, bootstrap, a.Group, a.Topic, ha, config())
	if err != nil {
		return nil, err
	}
	defer ga.Close()
	if err := waitFor(ctx, "the first member to own every partition", errs, func() bool { return len(ha.owned()) == a.Partitions }); err != nil {
		return nil, err
	}
	first := ha.owned()
	gb, errsB, err := join(gctx, bootstrap, a.Group, a.Topic, hb, config())
	if err != nil {
		return nil, err
	}
	defer gb.Close()
	go func() {
		for e := range errsB {
			errs <- e
		}
	}()
	if err := waitFor(ctx, "the partitions to be split between both members", errs, func() bool {
		x, y := ha.owned(), hb.owned()
		return len(x) > 0 && len(y) > 0 && len(x)+len(y) == a.Partitions
	}); err != nil {
		return nil, fmt.Errorf("%w (a owns %v, b owns %v)", err, ha.owned(), hb.owned())
	}
	pa, pb := ha.owned(), hb.owned()
	if _, err := produce(ctx, bootstrap, produceArgs{Topic: a.Topic, Records: a.Records}); err != nil {
		return nil, err
	}
	if err := waitFor(ctx, "every record", errs, func() bool { return ha.count()+hb.count() >= len(a.Records) }); err != nil {
		return nil, err
	}
	time.Sleep(300 * time.Millisecond) // a duplicate delivery would show up here
	ha.mu.Lock()
	hb.mu.Lock()
	ra, rb := append([]runner.ReadRec{}, ha.records...), append([]runner.ReadRec{}, hb.records...)
	ha.mu.Unlock()
	hb.mu.Unlock()
	runner.SortRecs(ra)
	runner.SortRecs(rb)
	return map[string]any{"first": first, "a": pa, "b": pb, "recordsA": ra, "recordsB": rb}, nil
}
