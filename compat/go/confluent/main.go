// confluent-kafka-go v2 (cgo over the librdkafka its module bundles as a
// static library) driven by compat/go-confluent-kafka-go.test.ts: reads a
// JSON scenario on stdin (see internal/runner) and prints JSON results.
package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

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
	})
}

func conf(bootstrap string, extra kafka.ConfigMap) *kafka.ConfigMap {
	c := kafka.ConfigMap{"bootstrap.servers": bootstrap, "client.id": "compat-confluent-kafka-go", "log_level": 3}
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

func toMessage(topic string, r runner.Rec) *kafka.Message {
	m := &kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: r.Partition}, Key: r.Key, Value: r.Value}
	for _, h := range r.Headers {
		m.Headers = append(m.Headers, kafka.Header{Key: h.Key, Value: h.Value})
	}
	return m
}

func fromMessage(m *kafka.Message) runner.ReadRec {
	out := runner.ReadRec{Partition: m.TopicPartition.Partition, Offset: int64(m.TopicPartition.Offset), Key: m.Key, Value: m.Value, Headers: []runner.Header{}}
	for _, h := range m.Headers {
		out.Headers = append(out.Headers, runner.Header{Key: h.Key, Value: h.Value})
	}
	return out
}

type produceArgs struct {
	Topic      string       `json:"topic"`
	Codec      string       `json:"codec"`
	Records    []runner.Rec `json:"records"`
	Idempotent bool         `json:"idempotent"`
}

type delivered struct {
	Partition int32 `json:"partition"`
	Offset    int64 `json:"offset"`
}

// send produces every record and waits for each delivery report, in input order.
func send(ctx context.Context, p *kafka.Producer, topic string, recs []runner.Rec) ([]delivered, error) {
	reports := make([]chan kafka.Event, len(recs))
	for i, r := range recs {
		reports[i] = make(chan kafka.Event, 1)
		if err := p.Produce(toMessage(topic, r), reports[i]); err != nil {
			return nil, err
		}
	}
	out := []delivered{}
	for _, ch := range reports {
		select {
		case e := <-ch:
			m := e.(*kafka.Message)
			if m.TopicPartition.Error != nil {
				return nil, m.TopicPartition.Error
			}
			out = append(out, delivered{m.TopicPartition.Partition, int64(m.TopicPartition.Offset)})
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return out, nil
}

func produce(ctx context.Context, bootstrap string, a produceArgs) (any, error) {
	codec := a.Codec
	if codec == "" {
		codec = "none"
	}
	p, err := kafka.NewProducer(conf(bootstrap, kafka.ConfigMap{"acks": "all", "compression.type": codec, "linger.ms": 20, "enable.idempotence": a.Idempotent}))
	if err != nil {
		return nil, err
	}
	defer p.Close()
	out, err := send(ctx, p, a.Topic, a.Records)
	if err != nil {
		return nil, err
	}
	return map[string]any{"delivered": out}, nil
}

type fetchArgs struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
	Offset     *int64  `json:"offset"`
	Committed  bool    `json:"readCommitted"`
}

// fetch: Assign() at an offset (no group join, no commits), read until every partition reports EOF.
func fetch(ctx context.Context, bootstrap string, a fetchArgs) (any, error) {
	iso := "read_uncommitted"
	if a.Committed {
		iso = "read_committed"
	}
	c, err := kafka.NewConsumer(conf(bootstrap, kafka.ConfigMap{"group.id": "compat-unused", "enable.auto.commit": false, "enable.partition.eof": true, "isolation.level": iso}))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	tps := []kafka.TopicPartition{}
	for _, p := range a.Partitions {
		off := kafka.OffsetBeginning
		if a.Offset != nil {
			off = kafka.Offset(*a.Offset)
		}
		tps = append(tps, kafka.TopicPartition{Topic: &a.Topic, Partition: p, Offset: off})
	}
	if err := c.Assign(tps); err != nil {
		return nil, err
	}
	out := []runner.ReadRec{}
	eof := map[int32]bool{}
	for len(eof) < len(a.Partitions) {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("read %d records, EOF on %v: %w", len(out), eof, ctx.Err())
		}
		switch e := c.Poll(200).(type) {
		case *kafka.Message:
			out = append(out, fromMessage(e))
		case kafka.PartitionEOF:
			eof[e.Partition] = true
		case kafka.Error:
			return nil, e
		}
	}
	runner.SortRecs(out)
	return map[string]any{"records": out}, nil
}

func offsets(_ context.Context, bootstrap string, a struct {
	Topic string `json:"topic"`
	At    *int64 `json:"timestamp"`
}) (any, error) {
	c, err := kafka.NewConsumer(conf(bootstrap, kafka.ConfigMap{"group.id": "compat-unused", "enable.auto.commit": false}))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	md, err := c.GetMetadata(&a.Topic, false, 10000)
	if err != nil {
		return nil, err
	}
	n := len(md.Topics[a.Topic].Partitions)
	earliest, latest := []int64{}, []int64{}
	tps := []kafka.TopicPartition{}
	for p := int32(0); p < int32(n); p++ {
		lo, hi, err := c.QueryWatermarkOffsets(a.Topic, p, 10000)
		if err != nil {
			return nil, err
		}
		earliest, latest = append(earliest, lo), append(latest, hi)
		if a.At != nil {
			tps = append(tps, kafka.TopicPartition{Topic: &a.Topic, Partition: p, Offset: kafka.Offset(*a.At)})
		}
	}
	out := map[string]any{"earliest": earliest, "latest": latest}
	if a.At != nil {
		res, err := c.OffsetsForTimes(tps, 10000)
		if err != nil {
			return nil, err
		}
		sort.Slice(res, func(i, j int) bool { return res[i].Partition < res[j].Partition })
		at := []int64{}
		for _, tp := range res {
			at = append(at, int64(tp.Offset))
		}
		out["byTimestamp"] = at
	}
	return out, nil
}

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

func configs(ctx context.Context, bootstrap string, a struct {
	Topic string            `json:"topic"`
	Set   map[string]string `json:"set"`
	Names []string          `json:"names"`
}) (any, error) {
	ad, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer ad.Close()
	describe := func() (map[string]any, error) {
		res, err := ad.DescribeConfigs(ctx, []kafka.ConfigResource{{Type: kafka.ResourceTopic, Name: a.Topic}})
		if err != nil {
			return nil, err
		}
		if res[0].Error.Code() != kafka.ErrNoError {
			return nil, res[0].Error
		}
		out := map[string]any{}
		for _, n := range a.Names {
			if e, ok := res[0].Config[n]; ok {
				out[n] = map[string]any{"value": e.Value, "source": e.Source.String()}
			}
		}
		return out, nil
	}
	before, err := describe()
	if err != nil {
		return nil, err
	}
	entries := []kafka.ConfigEntry{}
	for k, v := range a.Set {
		entries = append(entries, kafka.ConfigEntry{Name: k, Value: v, IncrementalOperation: kafka.AlterConfigOpTypeSet})
	}
	res, err := ad.IncrementalAlterConfigs(ctx, []kafka.ConfigResource{{Type: kafka.ResourceTopic, Name: a.Topic, Config: entries}})
	if err != nil {
		return nil, err
	}
	after, err := describe()
	if err != nil {
		return nil, err
	}
	return map[string]any{"before": before, "alter": code(res[0].Error), "after": after}, nil
}

func partitions(ctx context.Context, bootstrap string, a struct {
	Topic string `json:"topic"`
	Add   int    `json:"add"`
}) (any, error) {
	ad, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer ad.Close()
	count := func() ([]int32, error) {
		md, err := ad.GetMetadata(&a.Topic, false, 10000)
		if err != nil {
			return nil, err
		}
		ids := []int32{}
		for _, p := range md.Topics[a.Topic].Partitions {
			ids = append(ids, p.ID)
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		return ids, nil
	}
	ids, err := count()
	if err != nil {
		return nil, err
	}
	res, err := ad.CreatePartitions(ctx, []kafka.PartitionsSpecification{{Topic: a.Topic, IncreaseTo: len(ids) + a.Add}})
	if err != nil {
		return nil, err
	}
	ids, err = count()
	if err != nil {
		return nil, err
	}
	return map[string]any{"error": code(res[0].Error), "partitions": ids}, nil
}

func groups(ctx context.Context, bootstrap string, a struct {
	groupArgs
	Consume int `json:"consume"`
}) (any, error) {
	c, err := groupConsumer(bootstrap, a.groupArgs, nil)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if err := c.Subscribe(a.Topic, nil); err != nil {
		return nil, err
	}
	for got := 0; got < a.Consume; {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if m, ok := c.Poll(200).(*kafka.Message); ok {
			if _, err := c.CommitMessage(m); err != nil {
				return nil, err
			}
			got++
		}
	}
	ad, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer ad.Close()
	listed, err := ad.ListConsumerGroups(ctx)
	if err != nil {
		return nil, err
	}
	names := []string{}
	for _, g := range listed.Valid {
		names = append(names, g.GroupID)
	}
	described, err := ad.DescribeConsumerGroups(ctx, []string{a.Group})
	if err != nil {
		return nil, err
	}
	d := described.ConsumerGroupDescriptions[0]
	if d.Error.Code() != kafka.ErrNoError {
		return nil, d.Error
	}
	members := []map[string]any{}
	for _, m := range d.Members {
		assigned := []int32{}
		for _, tp := range m.Assignment.TopicPartitions {
			assigned = append(assigned, tp.Partition)
		}
		members = append(members, map[string]any{"clientId": m.ClientID, "assigned": assigned})
	}
	committed, err := committedOffsets(ctx, bootstrap, a.Group, a.Topic)
	if err != nil {
		return nil, err
	}
	md, err := c.GetMetadata(&a.Topic, false, 10000)
	if err != nil {
		return nil, err
	}
	lag, total := map[int32]int64{}, int64(0)
	for _, pm := range md.Topics[a.Topic].Partitions {
		p := pm.ID
		_, hi, err := c.QueryWatermarkOffsets(a.Topic, p, 10000)
		if err != nil {
			return nil, err
		}
		lag[p] = hi - committed[p]
		total += lag[p]
	}
	// Title case, as Kafka names the state ("Stable"); librdkafka's names are upper case.
	state := d.State.String()
	state = strings.ToUpper(state[:1]) + strings.ToLower(state[1:])
	return map[string]any{"listed": names, "state": state, "protocolType": nil, "protocol": d.PartitionAssignor,
		"members": members, "lag": lag, "totalLag": total}, nil
}

func deleteRecords(ctx context.Context, bootstrap string, a struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Before    int64  `json:"before"`
}) (any, error) {
	ad, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer ad.Close()
	res, err := ad.DeleteRecords(ctx, []kafka.TopicPartition{{Topic: &a.Topic, Partition: a.Partition, Offset: kafka.Offset(a.Before)}})
	if err != nil {
		return nil, err
	}
	r := res.DeleteRecordsResults[0]
	var low any
	if r.DeletedRecords != nil {
		low = int64(r.DeletedRecords.LowWatermark)
	}
	c, err := kafka.NewConsumer(conf(bootstrap, kafka.ConfigMap{"group.id": "compat-unused"}))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	lo, _, err := c.QueryWatermarkOffsets(a.Topic, a.Partition, 10000)
	if err != nil {
		return nil, err
	}
	return map[string]any{"error": code(r.TopicPartition.Error), "lowWatermark": low, "start": lo}, nil
}

func acls(ctx context.Context, bootstrap string, a struct {
	Topic     string `json:"topic"`
	Principal string `json:"principal"`
}) (any, error) {
	ad, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer ad.Close()
	bindings := kafka.ACLBindings{}
	for _, op := range []kafka.ACLOperation{kafka.ACLOperationRead, kafka.ACLOperationDescribe} {
		bindings = append(bindings, kafka.ACLBinding{Type: kafka.ResourceTopic, Name: a.Topic, ResourcePatternType: kafka.ResourcePatternTypeLiteral,
			Principal: a.Principal, Host: "*", Operation: op, PermissionType: kafka.ACLPermissionTypeAllow})
	}
	created, err := ad.CreateACLs(ctx, bindings)
	if err != nil {
		return nil, err
	}
	codes := []int16{}
	for _, c := range created {
		codes = append(codes, code(c.Error))
	}
	filter := kafka.ACLBindingFilter{Type: kafka.ResourceTopic, Name: a.Topic, ResourcePatternType: kafka.ResourcePatternTypeMatch,
		Principal: a.Principal, Operation: kafka.ACLOperationAny, PermissionType: kafka.ACLPermissionTypeAny}
	describe := func() ([]string, error) {
		res, err := ad.DescribeACLs(ctx, filter)
		if err != nil {
			return nil, err
		}
		if res.Error.Code() != kafka.ErrNoError {
			return nil, res.Error
		}
		out := []string{}
		for _, b := range res.ACLBindings {
			out = append(out, strings.ToUpper(fmt.Sprintf("%s %s %s %s", b.Name, b.Principal, b.Operation, b.Host)))
		}
		sort.Strings(out)
		return out, nil
	}
	before, err := describe()
	if err != nil {
		return nil, err
	}
	del := filter
	del.ResourcePatternType = kafka.ResourcePatternTypeLiteral
	deleted, err := ad.DeleteACLs(ctx, kafka.ACLBindingFilters{del})
	if err != nil {
		return nil, err
	}
	n := 0
	for _, d := range deleted {
		if d.Error.Code() != kafka.ErrNoError {
			return nil, d.Error
		}
		n += len(d.ACLBindings)
	}
	after, err := describe()
	if err != nil {
		return nil, err
	}
	return map[string]any{"created": codes, "described": before, "deleted": n, "after": after}, nil
}

func cluster(ctx context.Context, bootstrap string, _ struct{}) (any, error) {
	ad, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer ad.Close()
	res, err := ad.DescribeCluster(ctx)
	if err != nil {
		return nil, err
	}
	brokers, ids := []map[string]any{}, []int{}
	for _, n := range res.Nodes {
		brokers = append(brokers, map[string]any{"id": n.ID, "host": n.Host, "port": n.Port})
		ids = append(ids, n.ID)
	}
	id, controller := "", -1
	if res.ClusterID != nil {
		id = *res.ClusterID
	}
	if res.Controller != nil {
		controller = res.Controller.ID
	}
	return map[string]any{"error": 0, "clusterId": id, "controller": controller, "brokers": brokers, "listed": ids}, nil
}

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
