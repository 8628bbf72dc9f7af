// IBM/sarama driven by compat/go-sarama.test.ts: reads a JSON scenario on
// stdin (see internal/runner) and prints JSON results. SARAMA_VERSION picks
// config.Version (the Kafka version sarama assumes, e.g. 4.3.1); unset, it is
// sarama's default.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/IBM/sarama"

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
	})
}

func config() *sarama.Config {
	c := sarama.NewConfig()
	c.ClientID = "compat-sarama"
	if v := os.Getenv("SARAMA_VERSION"); v != "" {
		version, err := sarama.ParseKafkaVersion(v)
		if err != nil {
			panic(err)
		}
		c.Version = version
	}
	c.Metadata.Retry.Backoff = 100 * time.Millisecond
	c.Producer.RequiredAcks = sarama.WaitForAll
	c.Producer.Return.Successes = true
	c.Producer.Partitioner = sarama.NewManualPartitioner
	c.Producer.Flush.Frequency = 20 * time.Millisecond
	c.Consumer.Return.Errors = true
	c.Consumer.Offsets.Initial = sarama.OffsetOldest
	c.Consumer.MaxWaitTime = 300 * time.Millisecond
	c.Consumer.Group.Rebalance.Retry.Backoff = 200 * time.Millisecond
	return c
}

func admin(bootstrap string) (sarama.ClusterAdmin, error) {
	return sarama.NewClusterAdmin([]string{bootstrap}, config())
}

// code is the Kafka error code of err (0 for nil, -1 for an error that is not Kafka's).
func code(err error) int16 {
	if err == nil {
		return 0
	}
	var ke sarama.KError
	if errors.As(err, &ke) {
		return int16(ke)
	}
	var te *sarama.TopicError
	if errors.As(err, &te) {
		return int16(te.Err)
	}
	var pe *sarama.TopicPartitionError
	if errors.As(err, &pe) {
		return int16(pe.Err)
	}
	return -1
}

type topicSpec struct {
	Name       string            `json:"name"`
	Partitions int32             `json:"partitions"`
	Configs    map[string]string `json:"configs"`
}

func create(_ context.Context, bootstrap string, a struct{ Topics []topicSpec }) (any, error) {
	ca, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer ca.Close()
	out := [][2]any{}
	for _, t := range a.Topics {
		cfg := map[string]*string{}
		for k, v := range t.Configs {
			cfg[k] = &v
		}
		err := ca.CreateTopic(t.Name, &sarama.TopicDetail{NumPartitions: t.Partitions, ReplicationFactor: 1, ConfigEntries: cfg}, false)
		if err != nil && code(err) == -1 {
			return nil, err
		}
		out = append(out, [2]any{t.Name, code(err)})
	}
	return map[string]any{"errors": out}, nil
}

func list(_ context.Context, bootstrap string, a struct{ Describe []string }) (any, error) {
	ca, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer ca.Close()
	all, err := ca.ListTopics()
	if err != nil {
		return nil, err
	}
	names := []string{}
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := map[string][]int32{}
	leaders := map[string][]int32{}
	if len(a.Describe) > 0 {
		md, err := ca.DescribeTopics(a.Describe)
		if err != nil {
			return nil, err
		}
		for _, t := range md {
			sort.Slice(t.Partitions, func(i, j int) bool { return t.Partitions[i].ID < t.Partitions[j].ID })
			for _, p := range t.Partitions {
				parts[t.Name] = append(parts[t.Name], p.ID)
				leaders[t.Name] = append(leaders[t.Name], p.Leader)
			}
		}
	}
	bs, _, err := ca.DescribeCluster()
	if err != nil {
		return nil, err
	}
	return map[string]any{"topics": names, "partitions": parts, "leaders": leaders, "brokers": brokerList(bs)}, nil
}

func brokerList(bs []*sarama.Broker) []map[string]any {
	out := []map[string]any{}
	for _, b := range bs {
		host, port, _ := strings.Cut(b.Addr(), ":")
		var p int
		fmt.Sscan(port, &p)
		out = append(out, map[string]any{"id": b.ID(), "host": host, "port": p})
	}
	return out
}

func deleteTopics(_ context.Context, bootstrap string, a struct{ Topics []string }) (any, error) {
	ca, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer ca.Close()
	out := [][2]any{}
	for _, t := range a.Topics {
		err := ca.DeleteTopic(t)
		if err != nil && code(err) == -1 {
			return nil, err
		}
		out = append(out, [2]any{t, code(err)})
	}
	return map[string]any{"errors": out}, nil
}

var codecs = map[string]sarama.CompressionCodec{
	"": sarama.CompressionNone, "none": sarama.CompressionNone, "gzip": sarama.CompressionGZIP,
	"snappy": sarama.CompressionSnappy, "lz4": sarama.CompressionLZ4, "zstd": sarama.CompressionZSTD,
}

// bytesOrNil keeps a null key or value null: a nil Encoder is sent as -1, ByteEncoder{} as zero-length.
func bytesOrNil(b []byte) sarama.Encoder {
	if b == nil {
		return nil
	}
	return sarama.ByteEncoder(b)
}

func toMessage(topic string, r runner.Rec) *sarama.ProducerMessage {
	m := &sarama.ProducerMessage{Topic: topic, Partition: r.Partition, Key: bytesOrNil(r.Key), Value: bytesOrNil(r.Value)}
	for _, h := range r.Headers {
		m.Headers = append(m.Headers, sarama.RecordHeader{Key: []byte(h.Key), Value: h.Value})
	}
	return m
}

func fromMessage(m *sarama.ConsumerMessage) runner.ReadRec {
	out := runner.ReadRec{Partition: m.Partition, Offset: m.Offset, Key: m.Key, Value: m.Value, Headers: []runner.Header{}}
	for _, h := range m.Headers {
		out.Headers = append(out.Headers, runner.Header{Key: string(h.Key), Value: h.Value})
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

func produce(_ context.Context, bootstrap string, a produceArgs) (any, error) {
	codec, ok := codecs[a.Codec]
	if !ok {
		return nil, fmt.Errorf("unknown codec %q", a.Codec)
	}
	c := config()
	c.Producer.Compression = codec
	if a.Idempotent {
		c.Producer.Idempotent = true
		c.Net.MaxOpenRequests = 1
	}
	p, err := sarama.NewSyncProducer([]string{bootstrap}, c)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	msgs := make([]*sarama.ProducerMessage, len(a.Records))
	for i, r := range a.Records {
		msgs[i] = toMessage(a.Topic, r)
	}
	if err := p.SendMessages(msgs); err != nil {
		return nil, err
	}
	out := []delivered{}
	for _, m := range msgs {
		out = append(out, delivered{m.Partition, m.Offset})
	}
	return map[string]any{"delivered": out}, nil
}

type fetchArgs struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
	Offset     *int64  `json:"offset"`
	Committed  bool    `json:"readCommitted"`
}

// fetch reads group-less (ConsumePartition) from an offset up to the end offset.
// Transaction markers and aborted records are never delivered, so a read also
// ends after an idle second once it has records.
func fetch(ctx context.Context, bootstrap string, a fetchArgs) (any, error) {
	c := config()
	if a.Committed {
		c.Consumer.IsolationLevel = sarama.ReadCommitted
	}
	cl, err := sarama.NewClient([]string{bootstrap}, c)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	consumer, err := sarama.NewConsumerFromClient(cl)
	if err != nil {
		return nil, err
	}
	defer consumer.Close()
	out := []runner.ReadRec{}
	for _, p := range a.Partitions {
		end, err := cl.GetOffset(a.Topic, p, sarama.OffsetNewest)
		if err != nil {
			return nil, err
		}
		start := sarama.OffsetOldest
		if a.Offset != nil {
			start = *a.Offset
		}
		if a.Offset != nil && *a.Offset >= end || end == 0 {
			continue
		}
		pc, err := consumer.ConsumePartition(a.Topic, p, start)
		if err != nil {
			return nil, err
		}
		idle := 8 * time.Second
	read:
		for {
			select {
			case m := <-pc.Messages():
				out = append(out, fromMessage(m))
				idle = time.Second
				if m.Offset+1 >= end {
					break read
				}
			case e := <-pc.Errors():
				pc.Close()
				return nil, e
			case <-time.After(idle):
				break read
			case <-ctx.Done():
				pc.Close()
				return nil, ctx.Err()
			}
		}
		pc.Close()
	}
	runner.SortRecs(out)
	return map[string]any{"records": out}, nil
}

func offsets(_ context.Context, bootstrap string, a struct {
	Topic string `json:"topic"`
	At    *int64 `json:"timestamp"`
}) (any, error) {
	cl, err := sarama.NewClient([]string{bootstrap}, config())
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ps, err := cl.Partitions(a.Topic)
	if err != nil {
		return nil, err
	}
	res := map[string]any{}
	kinds := map[string]int64{"earliest": sarama.OffsetOldest, "latest": sarama.OffsetNewest}
	if a.At != nil {
		kinds["byTimestamp"] = *a.At
	}
	for name, ts := range kinds {
		list := []int64{}
		for _, p := range ps {
			o, err := cl.GetOffset(a.Topic, p, ts)
			if err != nil {
				return nil, err
			}
			list = append(list, o)
		}
		res[name] = list
	}
	return res, nil
}

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

func configs(_ context.Context, bootstrap string, a struct {
	Topic string            `json:"topic"`
	Set   map[string]string `json:"set"`
	Names []string          `json:"names"`
}) (any, error) {
	ca, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer ca.Close()
	describe := func() (map[string]any, error) {
		entries, err := ca.DescribeConfig(sarama.ConfigResource{Type: sarama.TopicResource, Name: a.Topic})
		if err != nil {
			return nil, err
		}
		out := map[string]any{}
		for _, n := range a.Names {
			for _, e := range entries {
				if e.Name == n {
					out[n] = map[string]any{"value": e.Value, "source": e.Source.String()}
				}
			}
		}
		return out, nil
	}
	before, err := describe()
	if err != nil {
		return nil, err
	}
	entries := map[string]sarama.IncrementalAlterConfigsEntry{}
	for k, v := range a.Set {
		entries[k] = sarama.IncrementalAlterConfigsEntry{Operation: sarama.IncrementalAlterConfigsOperationSet, Value: &v}
	}
	alterErr := ca.IncrementalAlterConfig(sarama.TopicResource, a.Topic, entries, false)
	after, err := describe()
	if err != nil {
		return nil, err
	}
	return map[string]any{"before": before, "alter": code(alterErr), "after": after}, nil
}

func partitions(_ context.Context, bootstrap string, a struct {
	Topic string `json:"topic"`
	Add   int32  `json:"add"`
}) (any, error) {
	ca, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer ca.Close()
	md, err := ca.DescribeTopics([]string{a.Topic})
	if err != nil {
		return nil, err
	}
	perr := ca.CreatePartitions(a.Topic, int32(len(md[0].Partitions))+a.Add, nil, false)
	md, err = ca.DescribeTopics([]string{a.Topic})
	if err != nil {
		return nil, err
	}
	ids := []int32{}
	for _, p := range md[0].Partitions {
		ids = append(ids, p.ID)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return map[string]any{"error": code(perr), "partitions": ids}, nil
}

// groups: a member reads and commits `consume` records and stays joined while
// the admin lists and describes groups; lag is the end offsets less the commits.
func groups(ctx context.Context, bootstrap string, a struct {
	groupArgs
	Consume int `json:"consume"`
}) (any, error) {
	c := config()
	c.Consumer.Offsets.AutoCommit.Enable = false
	c.ChannelBufferSize = 1
	h := &handler{mark: a.Consume}
	gctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, errs, err := join(gctx, bootstrap, a.Group, a.Topic, h, c)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	if err := waitFor(ctx, "the records", errs, func() bool { h.mu.Lock(); defer h.mu.Unlock(); return h.marked >= a.Consume }); err != nil {
		return nil, err
	}
	h.mu.Lock()
	h.session.Commit()
	h.mu.Unlock()
	ca, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer ca.Close()
	listed, err := ca.ListConsumerGroups()
	if err != nil {
		return nil, err
	}
	names := []string{}
	for n := range listed {
		names = append(names, n)
	}
	described, err := ca.DescribeConsumerGroups([]string{a.Group})
	if err != nil {
		return nil, err
	}
	d := described[0]
	if d.Err != sarama.ErrNoError {
		return nil, d.Err
	}
	members := []map[string]any{}
	for _, m := range d.Members {
		ma, err := m.GetMemberAssignment()
		if err != nil {
			return nil, err
		}
		members = append(members, map[string]any{"clientId": m.ClientId, "assigned": ma.Topics[a.Topic]})
	}
	committed, err := committedOffsets(bootstrap, a.Group, a.Topic)
	if err != nil {
		return nil, err
	}
	cl, err := sarama.NewClient([]string{bootstrap}, config())
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	lag, total := map[int32]int64{}, int64(0)
	ps, _ := cl.Partitions(a.Topic)
	for _, p := range ps {
		end, err := cl.GetOffset(a.Topic, p, sarama.OffsetNewest)
		if err != nil {
			return nil, err
		}
		at, ok := committed[p]
		if !ok || at < 0 {
			at = 0
		}
		lag[p] = end - at
		total += end - at
	}
	return map[string]any{"listed": names, "state": d.State, "protocolType": d.ProtocolType, "protocol": d.Protocol,
		"members": members, "lag": lag, "totalLag": total}, nil
}

func deleteRecords(_ context.Context, bootstrap string, a struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Before    int64  `json:"before"`
}) (any, error) {
	ca, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer ca.Close()
	derr := ca.DeleteRecords(a.Topic, map[int32]int64{a.Partition: a.Before})
	cl, err := sarama.NewClient([]string{bootstrap}, config())
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	start, err := cl.GetOffset(a.Topic, a.Partition, sarama.OffsetOldest)
	if err != nil {
		return nil, err
	}
	// sarama does not report the low watermark DeleteRecords answers.
	return map[string]any{"error": code(derr), "lowWatermark": nil, "start": start}, nil
}

func acls(_ context.Context, bootstrap string, a struct {
	Topic     string `json:"topic"`
	Principal string `json:"principal"`
}) (any, error) {
	ca, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer ca.Close()
	res := sarama.Resource{ResourceType: sarama.AclResourceTopic, ResourceName: a.Topic, ResourcePatternType: sarama.AclPatternLiteral}
	created := []int16{}
	for _, op := range []sarama.AclOperation{sarama.AclOperationRead, sarama.AclOperationDescribe} {
		err := ca.CreateACL(res, sarama.Acl{Principal: a.Principal, Host: "*", Operation: op, PermissionType: sarama.AclPermissionAllow})
		if err != nil && code(err) == -1 {
			return nil, err
		}
		created = append(created, code(err))
	}
	filter := sarama.AclFilter{ResourceType: sarama.AclResourceTopic, ResourceName: &a.Topic, ResourcePatternTypeFilter: sarama.AclPatternMatch,
		Principal: &a.Principal, Operation: sarama.AclOperationAny, PermissionType: sarama.AclPermissionAny}
	describe := func() ([]string, error) {
		rs, err := ca.ListAcls(filter)
		if err != nil {
			return nil, err
		}
		out := []string{}
		for _, r := range rs {
			for _, x := range r.Acls {
				op := x.Operation
				out = append(out, strings.ToUpper(fmt.Sprintf("%s %s %s %s", r.ResourceName, x.Principal, op.String(), x.Host)))
			}
		}
		sort.Strings(out)
		return out, nil
	}
	before, err := describe()
	if err != nil {
		return nil, err
	}
	filter.ResourcePatternTypeFilter = sarama.AclPatternLiteral
	matched, err := ca.DeleteACL(filter, false)
	if err != nil {
		return nil, err
	}
	after, err := describe()
	if err != nil {
		return nil, err
	}
	return map[string]any{"created": created, "described": before, "deleted": len(matched), "after": after}, nil
}

func cluster(_ context.Context, bootstrap string, _ struct{}) (any, error) {
	ca, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer ca.Close()
	bs, controller, err := ca.DescribeCluster()
	if err != nil {
		return nil, err
	}
	// The cluster id: DescribeCluster sent to the controller directly.
	cb, err := ca.Controller()
	if err != nil {
		return nil, err
	}
	resp, err := cb.DescribeCluster(sarama.NewDescribeClusterRequest(config().Version))
	if err != nil {
		return nil, err
	}
	ids := []int32{}
	for _, b := range bs {
		ids = append(ids, b.ID())
	}
	return map[string]any{"error": int16(resp.Err), "clusterId": resp.ClusterID, "controller": controller, "brokers": brokerList(bs), "listed": ids}, nil
}

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

// deleteGroups: OffsetDelete of one partition's commit (the group must be
// empty), then DeleteGroups; reports what is committed and listed after each.
func deleteGroups(_ context.Context, bootstrap string, a struct {
	Group     string `json:"group"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}) (any, error) {
	ca, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer ca.Close()
	delErr := ca.DeleteConsumerGroupOffset(a.Group, a.Topic, a.Partition)
	committed, err := committedOffsets(bootstrap, a.Group, a.Topic)
	if err != nil {
		return nil, err
	}
	dgErr := ca.DeleteConsumerGroup(a.Group)
	listed, err := ca.ListConsumerGroups()
	if err != nil {
		return nil, err
	}
	names := []string{}
	for n := range listed {
		names = append(names, n)
	}
	again := ca.DeleteConsumerGroup(a.Group)
	return map[string]any{"offsetDelete": code(delErr), "committedAfter": committed, "deleteGroup": code(dgErr), "listedAfter": names, "deleteAgain": code(again)}, nil
}
