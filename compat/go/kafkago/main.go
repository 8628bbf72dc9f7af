// segmentio/kafka-go driven by compat/go-kafka-go.test.ts: reads a JSON
// scenario on stdin (see internal/runner) and prints JSON results. Writer
// (every codec) and Reader (one partition, or a group) as applications use
// them; kafka.Client for admin; kafka.ConsumerGroup to watch a rebalance.
// kafka-go has no idempotent or transactional producer and no DeleteRecords
// or DescribeCluster call, nor the transaction admin calls: those ops are absent.
package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/compress"

	"pgkafka/compat/go/internal/runner"
)

func main() {
	runner.Main(map[string]runner.Op{
		"create":        runner.Typed(create),
		"list":          runner.Typed(list),
		"delete":        runner.Typed(deleteTopics),
		"produce":       runner.Typed(produce),
		"fetch":         runner.Typed(fetch),
		"offsets":       runner.Typed(offsets),
		"group_consume": runner.Typed(groupConsume),
		"rebalance":     runner.Typed(rebalance),
		"configs":       runner.Typed(configs),
		"partitions":    runner.Typed(partitions),
		"groups":        runner.Typed(groups),
		"acls":          runner.Typed(acls),
		"delete_groups": runner.Typed(deleteGroups),
	})
}

func client(bootstrap string) *kafka.Client {
	return &kafka.Client{Addr: kafka.TCP(bootstrap), Timeout: 15 * time.Second, Transport: &kafka.Transport{ClientID: "compat-kafka-go"}}
}

// code is the Kafka error code of err (0 for nil, -1 for an error that is not Kafka's).
func code(err error) int16 {
	if err == nil {
		return 0
	}
	var ke kafka.Error
	if errors.As(err, &ke) {
		return int16(ke)
	}
	return -1
}

type topicSpec struct {
	Name       string            `json:"name"`
	Partitions int               `json:"partitions"`
	Configs    map[string]string `json:"configs"`
}

func create(ctx context.Context, bootstrap string, a struct{ Topics []topicSpec }) (any, error) {
	out := [][2]any{}
	for _, t := range a.Topics {
		cfg := []kafka.ConfigEntry{}
		for k, v := range t.Configs {
			cfg = append(cfg, kafka.ConfigEntry{ConfigName: k, ConfigValue: v})
		}
		res, err := client(bootstrap).CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{Topic: t.Name, NumPartitions: t.Partitions, ReplicationFactor: 1, ConfigEntries: cfg}}})
		if err != nil {
			return nil, err
		}
		out = append(out, [2]any{t.Name, code(res.Errors[t.Name])})
	}
	return map[string]any{"errors": out}, nil
}

func list(ctx context.Context, bootstrap string, a struct{ Describe []string }) (any, error) {
	all, err := client(bootstrap).Metadata(ctx, &kafka.MetadataRequest{})
	if err != nil {
		return nil, err
	}
	names := []string{}
	for _, t := range all.Topics {
		names = append(names, t.Name)
	}
	sort.Strings(names)
	parts := map[string][]int{}
	leaders := map[string][]int{}
	if len(a.Describe) > 0 {
		md, err := client(bootstrap).Metadata(ctx, &kafka.MetadataRequest{Topics: a.Describe})
		if err != nil {
			return nil, err
		}
		for _, t := range md.Topics {
			if t.Error != nil {
				return nil, t.Error
			}
			sort.Slice(t.Partitions, func(i, j int) bool { return t.Partitions[i].ID < t.Partitions[j].ID })
			for _, p := range t.Partitions {
				parts[t.Name] = append(parts[t.Name], p.ID)
				leaders[t.Name] = append(leaders[t.Name], p.Leader.ID)
			}
		}
	}
	brokers := []map[string]any{}
	for _, b := range all.Brokers {
		brokers = append(brokers, map[string]any{"id": b.ID, "host": b.Host, "port": b.Port})
	}
	return map[string]any{"topics": names, "partitions": parts, "leaders": leaders, "brokers": brokers}, nil
}

func deleteTopics(ctx context.Context, bootstrap string, a struct{ Topics []string }) (any, error) {
	res, err := client(bootstrap).DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: a.Topics})
	if err != nil {
		return nil, err
	}
	out := [][2]any{}
	for _, t := range a.Topics {
		out = append(out, [2]any{t, code(res.Errors[t])})
	}
	return map[string]any{"errors": out}, nil
}

var codecs = map[string]compress.Compression{
	"": 0, "none": 0, "gzip": kafka.Gzip, "snappy": kafka.Snappy, "lz4": kafka.Lz4, "zstd": kafka.Zstd,
}

type produceArgs struct {
	Topic   string       `json:"topic"`
	Codec   string       `json:"codec"`
	Records []runner.Rec `json:"records"`
}

type delivered struct {
	Partition int   `json:"partition"`
	Offset    int64 `json:"offset"`
}

// produce writes with a Writer whose balancer keeps each message's partition;
// Completion reports each message's offset, matched back to the input by
// its position, carried in WriterData.
func produce(ctx context.Context, bootstrap string, a produceArgs) (any, error) {
	codec, ok := codecs[a.Codec]
	if !ok {
		return nil, fmt.Errorf("unknown codec %q", a.Codec)
	}
	out := make([]delivered, len(a.Records))
	var mu sync.Mutex
	w := &kafka.Writer{
		Addr: kafka.TCP(bootstrap), Topic: a.Topic, RequiredAcks: kafka.RequireAll, Compression: codec,
		Balancer:     kafka.BalancerFunc(func(m kafka.Message, _ ...int) int { return m.Partition }),
		BatchTimeout: 20 * time.Millisecond, Transport: &kafka.Transport{ClientID: "compat-kafka-go"},
		Completion: func(ms []kafka.Message, err error) {
			if err != nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, m := range ms {
				out[m.WriterData.(int)] = delivered{m.Partition, m.Offset}
			}
		},
	}
	msgs := make([]kafka.Message, len(a.Records))
	for i, r := range a.Records {
		msgs[i] = kafka.Message{Partition: int(r.Partition), Key: r.Key, Value: r.Value, WriterData: i}
		for _, h := range r.Headers {
			msgs[i].Headers = append(msgs[i].Headers, kafka.Header{Key: h.Key, Value: h.Value})
		}
	}
	err := w.WriteMessages(ctx, msgs...)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"delivered": out}, nil
}

func fromMessage(m kafka.Message) runner.ReadRec {
	out := runner.ReadRec{Partition: int32(m.Partition), Offset: m.Offset, Key: m.Key, Value: m.Value, Headers: []runner.Header{}}
	for _, h := range m.Headers {
		out.Headers = append(out.Headers, runner.Header{Key: h.Key, Value: h.Value})
	}
	return out
}

type fetchArgs struct {
	Topic      string `json:"topic"`
	Partitions []int  `json:"partitions"`
	Offset     *int64 `json:"offset"`
	Committed  bool   `json:"readCommitted"`
}

// fetch reads each partition with a group-less Reader from an offset to the
// end offset (or until an idle second, as transaction markers are never returned).
func fetch(ctx context.Context, bootstrap string, a fetchArgs) (any, error) {
	out := []runner.ReadRec{}
	iso := kafka.ReadUncommitted
	if a.Committed {
		iso = kafka.ReadCommitted
	}
	for _, p := range a.Partitions {
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{bootstrap}, Topic: a.Topic, Partition: p, MaxWait: 300 * time.Millisecond, IsolationLevel: iso})
		start := kafka.FirstOffset
		if a.Offset != nil {
			start = *a.Offset
		}
		if err := r.SetOffset(start); err != nil {
			r.Close()
			return nil, err
		}
		end, err := r.ReadLag(ctx)
		if err != nil {
			r.Close()
			return nil, err
		}
		idle := 8 * time.Second
		for end > 0 {
			rctx, cancel := context.WithTimeout(ctx, idle)
			m, err := r.ReadMessage(rctx)
			cancel()
			if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
				break
			}
			if err != nil {
				r.Close()
				return nil, err
			}
			out = append(out, fromMessage(m))
			idle = time.Second
			if m.HighWaterMark > 0 && m.Offset+1 >= m.HighWaterMark {
				break
			}
		}
		r.Close()
	}
	runner.SortRecs(out)
	return map[string]any{"records": out}, nil
}

func partitionsOf(ctx context.Context, bootstrap, topic string) ([]int, error) {
	md, err := client(bootstrap).Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return nil, err
	}
	ids := []int{}
	for _, p := range md.Topics[0].Partitions {
		ids = append(ids, p.ID)
	}
	sort.Ints(ids)
	return ids, nil
}

func offsets(ctx context.Context, bootstrap string, a struct {
	Topic string `json:"topic"`
	At    *int64 `json:"timestamp"`
}) (any, error) {
	ps, err := partitionsOf(ctx, bootstrap, a.Topic)
	if err != nil {
		return nil, err
	}
	reqs := []kafka.OffsetRequest{}
	for _, p := range ps {
		reqs = append(reqs, kafka.FirstOffsetOf(p), kafka.LastOffsetOf(p))
		if a.At != nil {
			reqs = append(reqs, kafka.TimeOffsetOf(p, time.UnixMilli(*a.At)))
		}
	}
	res, err := client(bootstrap).ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{a.Topic: reqs}})
	if err != nil {
		return nil, err
	}
	byP := map[int]kafka.PartitionOffsets{}
	for _, po := range res.Topics[a.Topic] {
		if po.Error != nil {
			return nil, po.Error
		}
		byP[po.Partition] = po
	}
	earliest, latest, at := []int64{}, []int64{}, []int64{}
	for _, p := range ps {
		earliest = append(earliest, byP[p].FirstOffset)
		latest = append(latest, byP[p].LastOffset)
		if a.At != nil {
			o := int64(-1)
			for off := range byP[p].Offsets {
				o = off
			}
			at = append(at, o)
		}
	}
	out := map[string]any{"earliest": earliest, "latest": latest}
	if a.At != nil {
		out["byTimestamp"] = at
	}
	return out, nil
}

type groupArgs struct {
	Group  string `json:"group"`
	Topic  string `json:"topic"`
	Expect int    `json:"expect"`
}

func groupReader(bootstrap string, a groupArgs) *kafka.Reader {
	return kafka.NewReader(kafka.ReaderConfig{Brokers: []string{bootstrap}, GroupID: a.Group, Topic: a.Topic, StartOffset: kafka.FirstOffset,
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
	cg, err := kafka.NewConsumerGroup(kafka.ConsumerGroupConfig{ID: a.Group, Brokers: []string{bootstrap}, Topics: []string{a.Topic},
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
					r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{bootstrap}, Topic: a.Topic, Partition: pa.ID, MaxWait: 300 * time.Millisecond})
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

func configs(ctx context.Context, bootstrap string, a struct {
	Topic string            `json:"topic"`
	Set   map[string]string `json:"set"`
	Names []string          `json:"names"`
}) (any, error) {
	describe := func() (map[string]any, error) {
		res, err := client(bootstrap).DescribeConfigs(ctx, &kafka.DescribeConfigsRequest{Resources: []kafka.DescribeConfigRequestResource{{ResourceType: kafka.ResourceTypeTopic, ResourceName: a.Topic}}})
		if err != nil {
			return nil, err
		}
		r := res.Resources[0]
		if r.Error != nil {
			return nil, r.Error
		}
		out := map[string]any{}
		for _, n := range a.Names {
			for _, e := range r.ConfigEntries {
				if e.ConfigName == n {
					out[n] = map[string]any{"value": e.ConfigValue, "source": configSource(e.ConfigSource)}
				}
			}
		}
		return out, nil
	}
	before, err := describe()
	if err != nil {
		return nil, err
	}
	entries := []kafka.IncrementalAlterConfigsRequestConfig{}
	for k, v := range a.Set {
		entries = append(entries, kafka.IncrementalAlterConfigsRequestConfig{Name: k, Value: v, ConfigOperation: kafka.ConfigOperationSet})
	}
	res, err := client(bootstrap).IncrementalAlterConfigs(ctx, &kafka.IncrementalAlterConfigsRequest{Resources: []kafka.IncrementalAlterConfigsRequestResource{{ResourceType: kafka.ResourceTypeTopic, ResourceName: a.Topic, Configs: entries}}})
	if err != nil {
		return nil, err
	}
	after, err := describe()
	if err != nil {
		return nil, err
	}
	return map[string]any{"before": before, "alter": code(res.Resources[0].Error), "after": after}, nil
}

// configSource names DescribeConfigs' config_source as Kafka does (kafka-go reports the number).
func configSource(s int8) string {
	names := map[int8]string{1: "DYNAMIC_TOPIC_CONFIG", 2: "DYNAMIC_BROKER_CONFIG", 3: "DYNAMIC_DEFAULT_BROKER_CONFIG", 4: "STATIC_BROKER_CONFIG", 5: "DEFAULT_CONFIG", 6: "DYNAMIC_BROKER_LOGGER_CONFIG"}
	if n, ok := names[s]; ok {
		return n
	}
	return strconv.Itoa(int(s))
}

func partitions(ctx context.Context, bootstrap string, a struct {
	Topic string `json:"topic"`
	Add   int    `json:"add"`
}) (any, error) {
	ps, err := partitionsOf(ctx, bootstrap, a.Topic)
	if err != nil {
		return nil, err
	}
	res, err := client(bootstrap).CreatePartitions(ctx, &kafka.CreatePartitionsRequest{Topics: []kafka.TopicPartitionsConfig{{Name: a.Topic, Count: int32(len(ps) + a.Add)}}})
	if err != nil {
		return nil, err
	}
	ps, err = partitionsOf(ctx, bootstrap, a.Topic)
	if err != nil {
		return nil, err
	}
	return map[string]any{"error": code(res.Errors[a.Topic]), "partitions": ps}, nil
}

// groups: a group Reader commits `consume` messages and stays joined while
// the client lists and describes groups; lag is end offsets less commits.
func groups(ctx context.Context, bootstrap string, a struct {
	groupArgs
	Consume int `json:"consume"`
}) (any, error) {
	r := groupReader(bootstrap, a.groupArgs)
	defer r.Close()
	for i := 0; i < a.Consume; i++ {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			return nil, err
		}
		if err := r.CommitMessages(ctx, m); err != nil {
			return nil, err
		}
	}
	cl := client(bootstrap)
	listed, err := cl.ListGroups(ctx, &kafka.ListGroupsRequest{})
	if err != nil {
		return nil, err
	}
	names, protocolType := []string{}, ""
	for _, g := range listed.Groups {
		names = append(names, g.GroupID)
		if g.GroupID == a.Group {
			protocolType = g.ProtocolType
		}
	}
	described, err := cl.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{a.Group}})
	if err != nil {
		return nil, err
	}
	d := described.Groups[0]
	if d.Error != nil {
		return nil, d.Error
	}
	members := []map[string]any{}
	for _, m := range d.Members {
		assigned := []int{}
		for _, t := range m.MemberAssignments.Topics {
			assigned = append(assigned, t.Partitions...)
		}
		members = append(members, map[string]any{"clientId": m.ClientID, "assigned": assigned})
	}
	committed, err := committedOffsets(ctx, bootstrap, a.Group, a.Topic)
	if err != nil {
		return nil, err
	}
	ps, err := partitionsOf(ctx, bootstrap, a.Topic)
	if err != nil {
		return nil, err
	}
	reqs := []kafka.OffsetRequest{}
	for _, p := range ps {
		reqs = append(reqs, kafka.LastOffsetOf(p))
	}
	ends, err := cl.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{a.Topic: reqs}})
	if err != nil {
		return nil, err
	}
	lag, total := map[int]int64{}, int64(0)
	for _, po := range ends.Topics[a.Topic] {
		lag[po.Partition] = po.LastOffset - committed[po.Partition]
		total += lag[po.Partition]
	}
	return map[string]any{"listed": names, "state": d.GroupState, "protocolType": protocolType, "members": members, "lag": lag, "totalLag": total}, nil
}

func acls(ctx context.Context, bootstrap string, a struct {
	Topic     string `json:"topic"`
	Principal string `json:"principal"`
}) (any, error) {
	cl := client(bootstrap)
	entries := []kafka.ACLEntry{}
	for _, op := range []kafka.ACLOperationType{kafka.ACLOperationTypeRead, kafka.ACLOperationTypeDescribe} {
		entries = append(entries, kafka.ACLEntry{ResourceType: kafka.ResourceTypeTopic, ResourceName: a.Topic, ResourcePatternType: kafka.PatternTypeLiteral,
			Principal: a.Principal, Host: "*", Operation: op, PermissionType: kafka.ACLPermissionTypeAllow})
	}
	created, err := cl.CreateACLs(ctx, &kafka.CreateACLsRequest{ACLs: entries})
	if err != nil {
		return nil, err
	}
	codes := []int16{}
	for _, e := range created.Errors {
		codes = append(codes, code(e))
	}
	filter := kafka.ACLFilter{ResourceTypeFilter: kafka.ResourceTypeTopic, ResourceNameFilter: a.Topic, ResourcePatternTypeFilter: kafka.PatternTypeMatch,
		PrincipalFilter: a.Principal, Operation: kafka.ACLOperationTypeAny, PermissionType: kafka.ACLPermissionTypeAny}
	describe := func() ([]string, error) {
		res, err := cl.DescribeACLs(ctx, &kafka.DescribeACLsRequest{Filter: filter})
		if err != nil {
			return nil, err
		}
		if res.Error != nil {
			return nil, res.Error
		}
		out := []string{}
		for _, r := range res.Resources {
			for _, x := range r.ACLs {
				out = append(out, fmt.Sprintf("%s %s %s %s", r.ResourceName, x.Principal, opName(x.Operation), x.Host))
			}
		}
		sort.Strings(out)
		return out, nil
	}
	before, err := describe()
	if err != nil {
		return nil, err
	}
	del := filter
	del.ResourcePatternTypeFilter = kafka.PatternTypeLiteral
	deleted, err := cl.DeleteACLs(ctx, &kafka.DeleteACLsRequest{Filters: []kafka.DeleteACLsFilter{{ResourceTypeFilter: del.ResourceTypeFilter, ResourceNameFilter: del.ResourceNameFilter,
		ResourcePatternTypeFilter: del.ResourcePatternTypeFilter, PrincipalFilter: del.PrincipalFilter, Operation: del.Operation, PermissionType: del.PermissionType}}})
	if err != nil {
		return nil, err
	}
	n := 0
	for _, r := range deleted.Results {
		if r.Error != nil {
			return nil, r.Error
		}
		n += len(r.MatchingACLs)
	}
	after, err := describe()
	if err != nil {
		return nil, err
	}
	return map[string]any{"created": codes, "described": before, "deleted": n, "after": after}, nil
}

func opName(op kafka.ACLOperationType) string {
	switch op {
	case kafka.ACLOperationTypeRead:
		return "READ"
	case kafka.ACLOperationTypeDescribe:
		return "DESCRIBE"
	}
	return strconv.Itoa(int(op))
}

// deleteGroups: OffsetDelete of one partition's commit (the group must be
// empty), then DeleteGroups; reports what is committed and listed after each.
func deleteGroups(ctx context.Context, bootstrap string, a struct {
	Group     string `json:"group"`
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
}) (any, error) {
	cl := client(bootstrap)
	del, err := cl.OffsetDelete(ctx, &kafka.OffsetDeleteRequest{GroupID: a.Group, Topics: map[string][]int{a.Topic: {a.Partition}}})
	if err != nil {
		return nil, err
	}
	delErr := del.Error
	for _, p := range del.Topics[a.Topic] {
		if p.Partition == a.Partition && delErr == nil {
			delErr = p.Error
		}
	}
	committed, err := committedOffsets(ctx, bootstrap, a.Group, a.Topic)
	if err != nil {
		return nil, err
	}
	dg, err := cl.DeleteGroups(ctx, &kafka.DeleteGroupsRequest{GroupIDs: []string{a.Group}})
	if err != nil {
		return nil, err
	}
	listed, err := cl.ListGroups(ctx, &kafka.ListGroupsRequest{})
	if err != nil {
		return nil, err
	}
	names := []string{}
	for _, g := range listed.Groups {
		names = append(names, g.GroupID)
	}
	again, err := cl.DeleteGroups(ctx, &kafka.DeleteGroupsRequest{GroupIDs: []string{a.Group}})
	if err != nil {
		return nil, err
	}
	return map[string]any{"offsetDelete": code(delErr), "committedAfter": committed, "deleteGroup": code(dg.Errors[a.Group]),
		"listedAfter": names, "deleteAgain": code(again.Errors[a.Group])}, nil
}
