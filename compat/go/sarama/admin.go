// Admin: configs, partitions, groups and lag, records, ACLs, the cluster.
package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/IBM/sarama"
)

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
