// franz-go (kgo, kadm) driven by compat/go-franz.test.ts: reads a JSON
// scenario on stdin (see internal/runner) and prints JSON results.
package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

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
	})
}

func client(bootstrap string, opts ...kgo.Opt) (*kgo.Client, error) {
	base := []kgo.Opt{kgo.SeedBrokers(bootstrap), kgo.ClientID("compat-franz-go"), kgo.RetryTimeout(15 * time.Second)}
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

var codecs = map[string]kgo.CompressionCodec{
	"": kgo.NoCompression(), "none": kgo.NoCompression(), "gzip": kgo.GzipCompression(),
	"snappy": kgo.SnappyCompression(), "lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
}

func toRecord(topic string, r runner.Rec) *kgo.Record {
	rec := &kgo.Record{Topic: topic, Partition: r.Partition, Key: r.Key, Value: r.Value}
	for _, h := range r.Headers {
		rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
	}
	return rec
}

func fromRecord(r *kgo.Record) runner.ReadRec {
	out := runner.ReadRec{Partition: r.Partition, Offset: r.Offset, Key: r.Key, Value: r.Value, Headers: []runner.Header{}}
	for _, h := range r.Headers {
		out.Headers = append(out.Headers, runner.Header{Key: h.Key, Value: h.Value})
	}
	return out
}

type produceArgs struct {
	Topic   string       `json:"topic"`
	Codec   string       `json:"codec"`
	Records []runner.Rec `json:"records"`
}

type delivered struct {
	Partition int32 `json:"partition"`
	Offset    int64 `json:"offset"`
}

// produce sends with franz-go's defaults: acks=all and the idempotent producer.
func produce(ctx context.Context, bootstrap string, a produceArgs) (any, error) {
	codec, ok := codecs[a.Codec]
	if !ok {
		return nil, fmt.Errorf("unknown codec %q", a.Codec)
	}
	cl, err := client(bootstrap, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(codec), kgo.ProducerLinger(20*time.Millisecond))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	recs := make([]*kgo.Record, len(a.Records))
	for i, r := range a.Records {
		recs[i] = toRecord(a.Topic, r)
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return nil, err
	}
	// Results come in the order partitions finished; the records carry their offsets in input order.
	out := []delivered{}
	for _, r := range recs {
		out = append(out, delivered{r.Partition, r.Offset})
	}
	return map[string]any{"delivered": out}, nil
}

type fetchArgs struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
	Offset     *int64  `json:"offset"`
	Committed  bool    `json:"readCommitted"`
}

// fetch reads group-less (ConsumePartitions) from an offset up to the end offsets.
func fetch(ctx context.Context, bootstrap string, a fetchArgs) (any, error) {
	adm, acl, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer acl.Close()
	var ends kadm.ListedOffsets
	if a.Committed {
		ends, err = adm.ListCommittedOffsets(ctx, a.Topic)
	} else {
		ends, err = adm.ListEndOffsets(ctx, a.Topic)
	}
	if err != nil {
		return nil, err
	}
	start := kgo.NewOffset().AtStart()
	if a.Offset != nil {
		start = kgo.NewOffset().At(*a.Offset)
	}
	assign := map[int32]kgo.Offset{}
	want := map[int32]int64{}
	for _, p := range a.Partitions {
		assign[p] = start
		if o, ok := ends.Lookup(a.Topic, p); ok {
			want[p] = o.Offset
		}
	}
	iso := kgo.ReadUncommitted()
	if a.Committed {
		iso = kgo.ReadCommitted()
	}
	cl, err := client(bootstrap, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{a.Topic: assign}), kgo.FetchIsolationLevel(iso))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	out := []runner.ReadRec{}
	pos := map[int32]int64{}
	done := func() bool {
		for p, end := range want {
			at, ok := pos[p]
			if a.Offset != nil && !ok {
				at = *a.Offset
			}
			if at < end {
				return false
			}
		}
		return true
	}
	// Control records (transaction markers) and aborted records are never
	// returned, so a read can end short of the end offset: it stops after an
	// idle poll (8 s before the first record, 1.5 s after).
	for !done() {
		idle := 8 * time.Second
		if len(out) > 0 {
			idle = 1500 * time.Millisecond
		}
		pctx, cancel := context.WithTimeout(ctx, idle)
		fs := cl.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("fetch stopped at %v of %v: %w", pos, want, ctx.Err())
		}
		if fs.NumRecords() == 0 && pctx.Err() != nil {
			break
		}
		for _, e := range fs.Errors() {
			if !errors.Is(e.Err, context.DeadlineExceeded) {
				return nil, e.Err
			}
		}
		fs.EachRecord(func(r *kgo.Record) {
			out = append(out, fromRecord(r))
			pos[r.Partition] = r.Offset + 1
		})
	}
	runner.SortRecs(out)
	return map[string]any{"records": out}, nil
}

func offsets(ctx context.Context, bootstrap string, a struct {
	Topic string `json:"topic"`
	At    *int64 `json:"timestamp"`
}) (any, error) {
	adm, cl, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	perPartition := func(l kadm.ListedOffsets, err error) ([]int64, error) {
		if err != nil {
			return nil, err
		}
		if err := l.Error(); err != nil {
			return nil, err
		}
		out := []int64{}
		for _, o := range sortedListed(l[a.Topic]) {
			out = append(out, o.Offset)
		}
		return out, nil
	}
	earliest, err := perPartition(adm.ListStartOffsets(ctx, a.Topic))
	if err != nil {
		return nil, err
	}
	latest, err := perPartition(adm.ListEndOffsets(ctx, a.Topic))
	if err != nil {
		return nil, err
	}
	res := map[string]any{"earliest": earliest, "latest": latest}
	if a.At != nil {
		if res["byTimestamp"], err = perPartition(adm.ListOffsetsAfterMilli(ctx, *a.At, a.Topic)); err != nil {
			return nil, err
		}
	}
	return res, nil
}

func sortedListed(m map[int32]kadm.ListedOffset) []kadm.ListedOffset {
	out := []kadm.ListedOffset{}
	for _, o := range m {
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Partition < out[j].Partition })
	return out
}

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

func configs(ctx context.Context, bootstrap string, a struct {
	Topic string            `json:"topic"`
	Set   map[string]string `json:"set"`
	Names []string          `json:"names"`
}) (any, error) {
	adm, cl, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	describe := func() (map[string]any, error) {
		rc, err := adm.DescribeTopicConfigs(ctx, a.Topic)
		if err != nil {
			return nil, err
		}
		c, err := rc.On(a.Topic, nil)
		if err != nil {
			return nil, err
		}
		if c.Err != nil {
			return nil, c.Err
		}
		out := map[string]any{}
		for _, n := range a.Names {
			for _, e := range c.Configs {
				if e.Key == n {
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
	alter := []kadm.AlterConfig{}
	for k, v := range a.Set {
		alter = append(alter, kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: &v})
	}
	res, err := adm.AlterTopicConfigs(ctx, alter, a.Topic)
	if err != nil {
		return nil, err
	}
	after, err := describe()
	if err != nil {
		return nil, err
	}
	return map[string]any{"before": before, "alter": code(res[0].Err), "after": after}, nil
}

func partitions(ctx context.Context, bootstrap string, a struct {
	Topic string `json:"topic"`
	Add   int    `json:"add"`
}) (any, error) {
	adm, cl, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	res, err := adm.CreatePartitions(ctx, a.Add, a.Topic)
	if err != nil {
		return nil, err
	}
	md, err := adm.Metadata(ctx, a.Topic)
	if err != nil {
		return nil, err
	}
	return map[string]any{"error": code(res[a.Topic].Err), "partitions": md.Topics[a.Topic].Partitions.Numbers()}, nil
}

// groups: a member of the group stays joined while the admin lists and
// describes groups and computes the group's lag.
func groups(ctx context.Context, bootstrap string, a struct {
	groupArgs
	Consume int `json:"consume"`
}) (any, error) {
	cl, err := client(bootstrap, kgo.ConsumerGroup(a.Group), kgo.ConsumeTopics(a.Topic), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(300*time.Millisecond))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	got := 0
	for got < a.Consume {
		fs := cl.PollRecords(ctx, a.Consume-got)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		got += fs.NumRecords()
		// Commit exactly what was read: the lag is what is left.
		if err := cl.CommitRecords(ctx, fs.Records()...); err != nil {
			return nil, err
		}
	}
	adm := kadm.NewClient(cl)
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		return nil, err
	}
	described, err := adm.DescribeGroups(ctx, a.Group)
	if err != nil {
		return nil, err
	}
	d := described[a.Group]
	if d.Err != nil {
		return nil, d.Err
	}
	members := []map[string]any{}
	for _, m := range d.Members {
		ca, _ := m.Assigned.AsConsumer()
		assigned := []int32{}
		if ca != nil {
			for _, t := range ca.Topics {
				assigned = append(assigned, t.Partitions...)
			}
		}
		members = append(members, map[string]any{"clientId": m.ClientID, "assigned": assigned})
	}
	lags, err := adm.Lag(ctx, a.Group)
	if err != nil {
		return nil, err
	}
	lag := map[int32]int64{}
	for _, l := range lags[a.Group].Lag[a.Topic] {
		lag[l.Partition] = l.Lag
	}
	return map[string]any{"listed": listed.Groups(), "state": d.State, "protocolType": d.ProtocolType, "protocol": d.Protocol,
		"members": members, "lag": lag, "totalLag": lags[a.Group].Lag.Total()}, nil
}

func deleteRecords(ctx context.Context, bootstrap string, a struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Before    int64  `json:"before"`
}) (any, error) {
	adm, cl, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	os := kadm.Offsets{}
	os.AddOffset(a.Topic, a.Partition, a.Before, -1)
	res, err := adm.DeleteRecords(ctx, os)
	if err != nil {
		return nil, err
	}
	r, _ := res.Lookup(a.Topic, a.Partition)
	starts, err := adm.ListStartOffsets(ctx, a.Topic)
	if err != nil {
		return nil, err
	}
	s, _ := starts.Lookup(a.Topic, a.Partition)
	return map[string]any{"error": code(r.Err), "lowWatermark": r.LowWatermark, "start": s.Offset}, nil
}

// acls creates an ACL, describes it, deletes it and describes again.
func acls(ctx context.Context, bootstrap string, a struct {
	Topic     string `json:"topic"`
	Principal string `json:"principal"`
}) (any, error) {
	adm, cl, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	b := kadm.NewACLs().Allow(a.Principal).AllowHosts("*").Topics(a.Topic).ResourcePatternType(kadm.ACLPatternLiteral).Operations(kadm.OpRead, kadm.OpDescribe)
	created, err := adm.CreateACLs(ctx, b)
	if err != nil {
		return nil, err
	}
	createErrs := []int16{}
	for _, c := range created {
		createErrs = append(createErrs, code(c.Err))
	}
	describe := func() ([]string, error) {
		d := kadm.NewACLs().Allow(a.Principal).AllowHosts().Topics(a.Topic).ResourcePatternType(kadm.ACLPatternMatch).Operations(kadm.OpAny)
		d.DenyHosts()
		res, err := adm.DescribeACLs(ctx, d)
		if err != nil {
			return nil, err
		}
		out := []string{}
		for _, r := range res {
			if r.Err != nil {
				return nil, r.Err
			}
			for _, x := range r.Described {
				out = append(out, fmt.Sprintf("%s %s %s %s %s %s", x.Type, x.Name, x.Pattern, x.Principal, x.Operation, x.Permission))
			}
		}
		sort.Strings(out)
		return out, nil
	}
	before, err := describe()
	if err != nil {
		return nil, err
	}
	del := kadm.NewACLs().Allow(a.Principal).AllowHosts("*").Topics(a.Topic).ResourcePatternType(kadm.ACLPatternLiteral).Operations(kadm.OpAny)
	deleted, err := adm.DeleteACLs(ctx, del)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, d := range deleted {
		if d.Err != nil {
			return nil, d.Err
		}
		n += len(d.Deleted)
	}
	after, err := describe()
	if err != nil {
		return nil, err
	}
	return map[string]any{"created": createErrs, "described": before, "deleted": n, "after": after}, nil
}

// cluster: DescribeCluster (raw kmsg; kadm describes brokers from Metadata) and kadm's broker list.
func cluster(ctx context.Context, bootstrap string, _ struct{}) (any, error) {
	adm, cl, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	req := kmsg.NewPtrDescribeClusterRequest()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	brokers := []map[string]any{}
	for _, b := range resp.Brokers {
		brokers = append(brokers, map[string]any{"id": b.NodeID, "host": b.Host, "port": b.Port})
	}
	listed, err := adm.ListBrokers(ctx)
	if err != nil {
		return nil, err
	}
	return map[string]any{"error": resp.ErrorCode, "clusterId": resp.ClusterID, "controller": resp.ControllerID, "brokers": brokers, "listed": listed.NodeIDs()}, nil
}

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

// deleteGroups: OffsetDelete of one partition's commit (the group must be
// empty), then DeleteGroups; reports what is committed and listed after each.
func deleteGroups(ctx context.Context, bootstrap string, a struct {
	Group     string `json:"group"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}) (any, error) {
	adm, cl, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	del, err := adm.DeleteOffsets(ctx, a.Group, kadm.TopicsSet{a.Topic: {a.Partition: {}}})
	if err != nil {
		return nil, err
	}
	delErr, _ := del.Lookup(a.Topic, a.Partition)
	afterOffsets, err := committedOffsets(ctx, bootstrap, a.Group, a.Topic)
	if err != nil {
		return nil, err
	}
	dg, err := adm.DeleteGroups(ctx, a.Group)
	if err != nil {
		return nil, err
	}
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		return nil, err
	}
	// Deleting again: the group is gone (GROUP_ID_NOT_FOUND).
	again, err := adm.DeleteGroups(ctx, a.Group)
	if err != nil {
		return nil, err
	}
	return map[string]any{"offsetDelete": code(delErr), "committedAfter": afterOffsets, "deleteGroup": code(dg[a.Group].Err),
		"listedAfter": listed.Groups(), "deleteAgain": code(again[a.Group].Err)}, nil
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
